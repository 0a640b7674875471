// The JSON text of entry views, kept with the stored entries they were made from. Stored entries
// are immutable (frozen; a write stores a new object), so the text of an entry's view stays true
// for as long as the entry object lives, given the same shape: the collection's model (its
// reference formatting) and, for resolved entries, the asset URL base. A page of entries is then
// written from the texts of its entries instead of serialized whole on every read, whether or
// not the response cache is on.
//
// The texts are found from their entries (weakly: a text goes when its entry does), kept from
// the second time one is made for an entry (KeptTexts), and bounded in bytes (TextBudget,
// CMS_TEXT_CACHE_BYTES): least recently used out first, over every memo sharing the budget.
// Entries alone would not bound them: the file store keeps every entry in memory, so every text
// ever made would stay; the SQLite store's entry caches are counted in entries, whatever their
// size.
//
// Also here: splicing such texts into a serialized value in place of placeholders (`_resolve`
// builds its embedded entries that way).
import { LRUCache } from 'lru-cache'

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

/**
 * What a kept text is counted for besides its characters: the records that hold and find it
 * (the memo's own, the weak map's, the budget's list). Measured on Node 20: 367 bytes a text
 * of 107, counted 363.
 */
export const KEPT_OVERHEAD = 256

/**
 * The most memory `text` takes in V8, in bytes: a string of ASCII characters takes one byte per
 * character; any other is counted at two per UTF-16 unit, what V8 takes for a string with a
 * character above U+00FF (at most), or at its UTF-8 length when that is more.
 */
export function textMemory (text: JsonText): number {
  const { json, bytes } = text
  return bytes === json.length ? bytes : Math.max(bytes, json.length * 2)
}

/** A kept value and what it is counted for; `value` is null once the budget has let it go. */
interface Slot {
  value: unknown
  size: number
  /** TextBudget's count of moves to the newest end when this slot last made one. */
  moved: number
}

/**
 * The bytes every kept text may take, together (CMS_TEXT_CACHE_BYTES): a least-recently-used
 * list of the kept texts of every memo that shares it, by the size each was counted for. Making
 * a text that does not fit lets the least recently used ones go; 0 keeps none.
 *
 * A text used while in the newer half of the list stays where it is (lazy promotion): moving
 * it to the newest end cost about 100 ns a hit, several times the rest of the hit, and a text
 * in the newer half is not next to go. One used in the older half moves, so a text used at
 * least once while half the list turns over is never let go.
 */
export class TextBudget {
  readonly maxBytes: number
  readonly #kept: LRUCache<Slot, Slot> | null
  /** Moves to the newest end so far (keeps and promotions): how far from that end a slot is. */
  #moves = 0

  constructor (maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`a text budget is a whole number of bytes, got ${maxBytes}`)
    this.maxBytes = maxBytes
    this.#kept = maxBytes === 0
      ? null
      : new LRUCache<Slot, Slot>({ maxSize: maxBytes, sizeCalculation: slot => slot.size, dispose: slot => { slot.value = null } })
  }

  /** The bytes the kept texts are counted for: never more than maxBytes. */
  get bytes (): number {
    return this.#kept?.calculatedSize ?? 0
  }

  /** Texts kept. */
  get count (): number {
    return this.#kept?.size ?? 0
  }

  /** Counts `slot` in as the most recently used; false (and the value let go) when it cannot be kept. */
  keep (slot: Slot): boolean {
    const kept = this.#kept
    if (kept === null || slot.size > this.maxBytes) {
      slot.value = null
      return false
    }
    kept.set(slot, slot)
    slot.moved = ++this.#moves
    return true
  }

  /** `slot`, kept, was used: among the last to go. */
  touch (slot: Slot): void {
    const kept = this.#kept
    // Slots moved since this one are between it and the newest end.
    if (kept === null || this.#moves - slot.moved < kept.size >>> 1) return
    slot.moved = ++this.#moves
    kept.get(slot)
  }

  /** Lets `slot` go, if it is kept. */
  drop (slot: Slot): void {
    this.#kept?.delete(slot)
  }

  /** Lets every kept text go. */
  clear (): void {
    this.#kept?.clear()
  }
}

/** The slot of a key whose value was made once and not kept (see KeptTexts). */
const SEEN: Slot = Object.freeze({ value: null, size: 0, moved: 0 }) as Slot

/**
 * Values kept per object key within a TextBudget. The key is held weakly, so a value goes with
 * its key. A value is kept from the second time one is made for its key: the first time, the
 * key is only noted. A full pull makes a text for every entry once, and keeping those would push
 * out the texts of entries read again and again for texts nobody asks for twice; it would also
 * cost several times their size, since the heap runs up to a few times what is live before a
 * full collection (measured: a 100,000-entry pull peaked 100 MB higher with texts kept from
 * their first making, and about as low as with none kept when kept from their second). A value
 * the budget let go leaves an empty slot (about 70 bytes) until its key goes; the next value
 * made for that key is kept at once.
 */
export class KeptTexts<K extends object, V extends object> {
  readonly budget: TextBudget
  readonly #slots = new WeakMap<K, Slot>()

  constructor (budget: TextBudget) {
    this.budget = budget
  }

  /** The value kept for `key`, now the most recently used, or undefined. */
  get (key: K): V | undefined {
    const slot = this.#slots.get(key)
    if (slot === undefined || slot.value === null) return undefined
    this.budget.touch(slot)
    return slot.value as V
  }

  /** `value` was made for `key`, counted as `size` bytes: kept in place of what was, unless it is the first. */
  set (key: K, value: V, size: number): void {
    if (this.budget.maxBytes === 0) return
    let slot = this.#slots.get(key)
    if (slot === undefined) {
      this.#slots.set(key, SEEN)
      return
    }
    if (slot === SEEN) {
      slot = { value, size, moved: 0 }
      this.#slots.set(key, slot)
    } else {
      // Out first: the budget counts a slot's size as it was when it came in.
      this.budget.drop(slot)
      slot.value = value
      slot.size = size
    }
    this.budget.keep(slot)
  }
}

interface Kept extends JsonText {
  shape: object
  variant: string
}

/** A text per (entry, shape), kept within a TextBudget (see KeptTexts); a new shape replaces the text. */
export class JsonMemo<K extends object> {
  private readonly texts: KeptTexts<K, Kept>

  constructor (budget: TextBudget) {
    this.texts = new KeptTexts(budget)
  }

  /**
   * The JSON text of what `make` builds for `entry` under `shape` (compared by identity) and
   * `variant` (compared by value), with its UTF-8 length; `make` runs only when no text is kept
   * for them.
   */
  text (entry: K, shape: object, variant: string, make: () => unknown): JsonText {
    const kept = this.texts.get(entry)
    if (kept !== undefined && kept.shape === shape && kept.variant === variant) return kept
    const made: Kept = { shape, variant, ...jsonText(JSON.stringify(make())) }
    this.texts.set(entry, made, textMemory(made) + KEPT_OVERHEAD)
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
