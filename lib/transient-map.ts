// A Map for short-lived keys on a long-lived object: one key per request or write in flight,
// added and removed again within milliseconds, while the map itself lives as long as the process.
//
// Why a plain Map is costly there (V8, as in Node 20): a Map keeps its entries in a hash table
// that is replaced whenever it grows, shrinks or fills up with deleted slots, and churning keys
// replace it every few dozen insertions. Once the Map has been promoted to the old generation,
// each replacement table is allocated in the old generation too. The tables it leaves behind are
// garbage, but only a full collection can tell, and until then a young collection treats what they
// point at as alive: the values of keys long deleted, and everything those values reach (for a
// lock, the promise chain of a finished request). All of that is promoted, and the old generation
// grows by hundreds of bytes a request until the next full collection, which with the default
// heap limits can be a hundred megabytes later. Measured on a SQLite server creating entries:
// about 95 KB promoted at every young collection with a plain Map, under 5 KB with this one.
//
// This map moves its entries to a new Map every `period` insertions. A new Map is young, its
// tables are allocated young, and the ones it discards die young. Copying costs one insertion
// per live key, which for a map of requests in flight is a few dozen, every `period` insertions.
// One difference from a Map: an iterator sees no change made after the next rebuild (a `set`),
// so do not insert while iterating.

export class TransientMap<K, V> implements Iterable<[K, V]> {
  #map = new Map<K, V>()
  #inserts = 0
  readonly #period: number

  /** `period`: insertions between rebuilds; keep it below the insertions between two young collections. */
  constructor (period = 256) {
    if (!Number.isInteger(period) || period < 1) throw new RangeError('period must be a positive integer')
    this.#period = period
  }

  get size (): number {
    return this.#map.size
  }

  get (key: K): V | undefined {
    return this.#map.get(key)
  }

  has (key: K): boolean {
    return this.#map.has(key)
  }

  set (key: K, value: V): this {
    if (++this.#inserts >= this.#period) {
      this.#inserts = 0
      this.#map = new Map(this.#map)
    }
    this.#map.set(key, value)
    return this
  }

  delete (key: K): boolean {
    return this.#map.delete(key)
  }

  clear (): void {
    this.#map = new Map()
    this.#inserts = 0
  }

  keys (): IterableIterator<K> {
    return this.#map.keys()
  }

  values (): IterableIterator<V> {
    return this.#map.values()
  }

  entries (): IterableIterator<[K, V]> {
    return this.#map.entries()
  }

  [Symbol.iterator] (): IterableIterator<[K, V]> {
    return this.#map.entries()
  }
}
