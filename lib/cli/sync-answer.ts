// A sync answer (contract §9) read without parsing its entries: each item's `entry` is handed
// back as the bytes the server sent, which are the body of GET on that entry, so that `lectern
// export` writes them as they are. Parsing every entry and serializing it again allocated about
// as much as the rest of the export put together (bench export row).
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '../json-bytes.js'

export interface RawSyncItem {
  op: 'upsert' | 'delete'
  collection: string
  slug: string
  /** The entry's JSON text as sent (a view of the answer's buffer); absent on a delete. */
  entry?: Buffer
}

export interface RawSyncAnswer {
  items: RawSyncItem[]
  cursor: string
  more: boolean
}

/** What ends a scalar: a separator, a closing bracket or whitespace. */
const DELIMITERS = new Set([COMMA, CLOSE_BRACE, CLOSE_BRACKET, 0x20, 0x0a, 0x0d, 0x09])

class Scanner {
  at = 0
  constructor (private readonly bytes: Buffer) {}

  fail (what: string): never {
    throw new Error(`Malformed sync answer: ${what} at byte ${this.at}`)
  }

  /** The next byte that is not JSON whitespace (the scanner is left on it). */
  peek (): number {
    for (; this.at < this.bytes.length; this.at++) {
      const c = this.bytes[this.at] as number
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c
    }
    return this.fail('unexpected end')
  }

  expect (byte: number): void {
    if (this.peek() !== byte) this.fail(`expected '${String.fromCharCode(byte)}'`)
    this.at++
  }

  /** Steps past the string that starts here. UTF-8 continuation bytes are never a quote or a backslash. */
  skipString (): void {
    for (let i = this.at + 1; i < this.bytes.length; i++) {
      const c = this.bytes[i]
      if (c === BACKSLASH) i++
      else if (c === QUOTE) { this.at = i + 1; return }
    }
    this.fail('unterminated string')
  }

  /** The bounds of the value that starts here (any JSON value), the scanner left after it. */
  value (): { start: number, end: number } {
    const first = this.peek()
    const start = this.at
    if (first === QUOTE) this.skipString()
    else if (first === OPEN_BRACE || first === OPEN_BRACKET) this.skipContainer()
    else this.skipScalar()
    return { start, end: this.at }
  }

  /** Steps past the object or array that starts here, whatever it holds. */
  private skipContainer (): void {
    let depth = 0
    while (this.at < this.bytes.length) {
      const c = this.bytes[this.at]
      if (c === QUOTE) { this.skipString(); continue }
      this.at++
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++
      else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return
    }
    this.fail('unterminated object or array')
  }

  /** Steps past a number, true, false or null (JSON.parse judges it, where it is parsed). */
  private skipScalar (): void {
    const start = this.at
    while (this.at < this.bytes.length && !DELIMITERS.has(this.bytes[this.at] as number)) this.at++
    if (this.at === start) this.fail('expected a value')
  }

  /** The JSON value that starts here, parsed (for the small fields: op, collection, slug, cursor, more). */
  parsed (): unknown {
    const { start, end } = this.value()
    return JSON.parse(this.bytes.toString('utf8', start, end))
  }

  /** Calls `member` for each member of the object that starts here, with its key; the scanner on its value. */
  object (member: (key: string) => void): void {
    this.expect(OPEN_BRACE)
    if (this.peek() === CLOSE_BRACE) { this.at++; return }
    for (;;) {
      if (this.peek() !== QUOTE) this.fail('expected a key')
      const key = this.parsed() as string
      this.expect(COLON)
      this.peek()
      member(key)
      if (this.peek() === CLOSE_BRACE) { this.at++; return }
      this.expect(COMMA)
    }
  }

  /** Calls `element` for each element of the array that starts here, the scanner on it. */
  array (element: () => void): void {
    this.expect(OPEN_BRACKET)
    if (this.peek() === CLOSE_BRACKET) { this.at++; return }
    for (;;) {
      element()
      if (this.peek() === CLOSE_BRACKET) { this.at++; return }
      this.expect(COMMA)
    }
  }

  view (bounds: { start: number, end: number }): Buffer {
    return this.bytes.subarray(bounds.start, bounds.end)
  }
}

function item (scan: Scanner): RawSyncItem {
  const fields: Partial<RawSyncItem> = {}
  scan.object(key => {
    if (key === 'entry') fields.entry = scan.view(scan.value())
    else if (key === 'op' || key === 'collection' || key === 'slug') fields[key] = scan.parsed() as never
    else scan.value()
  })
  const { op, collection, slug } = fields
  if ((op !== 'upsert' && op !== 'delete') || typeof collection !== 'string' || typeof slug !== 'string' || (op === 'upsert') !== (fields.entry !== undefined)) {
    return scan.fail('an item without op, collection, slug or entry')
  }
  return fields as RawSyncItem
}

/** Reads a sync answer's JSON bytes; throws on anything that is not one. */
export function readSyncAnswer (bytes: Buffer): RawSyncAnswer {
  const scan = new Scanner(bytes)
  const answer: Partial<RawSyncAnswer> = {}
  scan.object(key => {
    if (key === 'items') {
      const items: RawSyncItem[] = []
      scan.array(() => { items.push(item(scan)) })
      answer.items = items
    } else if (key === 'cursor' || key === 'more') {
      answer[key] = scan.parsed() as never
    } else {
      scan.value()
    }
  })
  if (!Array.isArray(answer.items) || typeof answer.cursor !== 'string' || typeof answer.more !== 'boolean') scan.fail('no items, cursor or more')
  return answer as RawSyncAnswer
}
