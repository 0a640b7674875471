// The JSON text of entry views, kept with the stored entries they were made from. Stored entries
// are immutable (frozen; a write stores a new object), so the text of an entry's view stays true
// for as long as the entry object lives, given the same shape: the collection's model (its
// reference formatting) and, for resolved entries, the asset URL base. A page of entries is then
// written from the texts of its entries instead of serialized whole on every read, whether or
// not the response cache is on. The texts live and die with the entries: the SQLite store's
// entry caches bound them, the file store keeps every entry (and so every text made) in memory.
//
// Also here: splicing such texts into a serialized value in place of placeholders (`_resolve`
// builds its embedded entries that way).

/** A JSON text and its length in UTF-8 bytes, which equals `json.length` exactly when every character is ASCII. */
export interface JsonText {
  readonly json: string
  readonly bytes: number
}

export function jsonText (json: string): JsonText {
  return { json, bytes: Buffer.byteLength(json, 'utf8') }
}

/**
 * Writes `text` as UTF-8 into `target` at `offset`, where the caller has left `text.bytes` of
 * room; returns the offset after what was written. An ASCII text is copied a byte per
 * character (latin1), which is the same bytes and about twice as fast as encoding it.
 */
export function writeJsonText (target: Buffer, offset: number, text: JsonText): number {
  const { json, bytes } = text
  // As many bytes as characters only when every character is ASCII (any other takes two to four).
  return offset + target.write(json, offset, bytes, bytes === json.length ? 'latin1' : 'utf8')
}

interface Kept extends JsonText {
  shape: object
  variant: string
}

/** Made once per (entry, shape); a new shape replaces the text. */
export class JsonMemo<K extends object> {
  private readonly texts = new WeakMap<K, Kept>()

  /**
   * The JSON text of what `make` builds for `entry` under `shape` (compared by identity) and
   * `variant` (compared by value), with its UTF-8 length; `make` runs only when no text is kept
   * for them.
   */
  text (entry: K, shape: object, variant: string, make: () => unknown): JsonText {
    const kept = this.texts.get(entry)
    if (kept !== undefined && kept.shape === shape && kept.variant === variant) return kept
    const made: Kept = { shape, variant, ...jsonText(JSON.stringify(make())) }
    this.texts.set(entry, made)
    return made
  }

  /** The text alone (see `text`). */
  json (entry: K, shape: object, variant: string, make: () => unknown): string {
    return this.text(entry, shape, variant, make).json
  }
}

/** A placeholder string: NUL and a number. JSON.stringify writes it as `"\u0000<n>"`. */
export function placeholder (n: number): string {
  return `\u0000${n}`
}

// Searched from its backslash, which JSON text holds only in escapes: a scan for a rare first
// character skips ahead much faster than one for a quote.
const ESCAPE = '\\u0000'
const MARK = `"${ESCAPE}`

/**
 * `json` (a JSON.stringify result) with its n-th placeholder replaced by `texts[n]`, or null when
 * the placeholders found are not exactly `placeholder(0)` to `placeholder(texts.length - 1)` in
 * order: the data itself held a string or key that looks like one (a NUL character, escaped
 * the same way), so the caller serializes without placeholders instead.
 */
export function spliceJson (json: string, texts: readonly string[]): string | null {
  const parts: string[] = []
  let from = 0
  let n = 0
  for (let escape = json.indexOf(ESCAPE); escape !== -1; escape = json.indexOf(ESCAPE, escape + ESCAPE.length)) {
    // Inside a string (a NUL character in the data, or after an escaped quote): not ours, and
    // the text cannot be spliced safely.
    if (json.charCodeAt(escape - 1) !== 34 || json.charCodeAt(escape - 2) === 92) return null
    const at = escape - 1
    const digits = at + MARK.length
    const end = json.indexOf('"', digits)
    if (n >= texts.length || end === -1 || json.slice(digits, end) !== String(n)) return null
    parts.push(json.slice(from, at), texts[n] as string)
    from = end + 1
    n++
  }
  if (n !== texts.length) return null
  parts.push(json.slice(from))
  return parts.join('')
}
