// How deep JSON may nest (issue 28, "Depth and size limits"). Request bodies deeper than
// MAX_JSON_DEPTH are refused before they are parsed, so nothing the API stores is deeper: every
// later step (validation, rendering, SQLite's JSON functions, which give up at 1,000 levels) has
// room to spare. Stored values written by other means (a hand-written entry file, a database
// from before the limit) may be deeper; the stores check them with storedDepthExceeds.
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './json-bytes.js'

/** Arrays and objects nested in one another, the outermost counting as one. */
export const MAX_JSON_DEPTH = 64

/**
 * Where stored data is refused as unreadable: SQLite's JSON functions fail on text nested
 * deeper than 1,000 ("malformed JSON"), which would fail an index build or a filter on every entry of
 * the collection. Both stores use this bound, so they keep and skip the same entries.
 */
export const MAX_STORED_DEPTH = 1000

/**
 * Whether JSON text nests deeper than `max`: one pass over the text, before it is parsed
 * (strings are skipped with indexOf, so their content costs next to nothing). Malformed text
 * is not judged here: whatever the answer, the parser refuses it.
 */
export function textDepthExceeds (text: string, max: number): boolean {
  let depth = 0
  const length = text.length
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = stringEnd(text, i)
      if (i < 0) return false
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > max) return true
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--
    }
  }
  return false
}

/** The index of the quote that closes the string opened at `start`, or -1 when none does. */
function stringEnd (text: string, start: number): number {
  let end = start
  for (;;) {
    end = text.indexOf('"', end + 1)
    if (end < 0) return -1
    // Escaped when an odd number of backslashes precedes it.
    let backslashes = 0
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++
    if ((backslashes & 1) === 0) return end
  }
}

/**
 * Whether a parsed value nests deeper than `max` (the value itself counting as one when it is an
 * array or object). Iterative, so any depth is measured without exhausting the stack; it stops
 * at the first path that is too deep.
 */
export function valueDepthExceeds (value: unknown, max: number): boolean {
  const stack: Array<{ value: unknown, depth: number }> = [{ value, depth: 1 }]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const current = item.value
    if (current === null || typeof current !== 'object') continue
    if (item.depth > max) return true
    const children = Array.isArray(current) ? current : Object.values(current as Record<string, unknown>)
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: item.depth + 1 })
    }
  }
  return false
}
