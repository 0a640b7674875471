// Reusable memory for response bodies that are sent once and not kept (a read with the cache
// off, or one the cache does not keep). Node copies a string of half `Buffer.poolSize` or more
// (4 KB on Node 20, 32 KB from Node 24) into a buffer of its own (shorter ones share a slab), and a fresh buffer per response is often memory the allocator
// has just handed back to the system, so writing it page-faults on every page. For a resolved
// page of 100 entries that cost more than encoding the text; for a plain page of 100 (28 KB) on
// a file store that had just taken 10,000 creates, it was 40% of the request (bench: 180–300 µs
// of server CPU a request before, 80–85 µs with the page pooled). A body encoded here lives in a
// buffer that came back from an earlier response, whose pages are already mapped.
// Pure: the caller says when a body's bytes have been handed to the socket (release).
//
// Bounded: free buffers are kept up to `maxFreeBytes` in all (CMS_BODY_POOL_BYTES; 0 pools
// nothing), beyond which a released one is left to the garbage collector; a body that would need
// a buffer larger than that is not pooled at all. Buffers lent out are the bodies in flight.
import { DEFAULT_BODY_POOL_BYTES } from '../config.js'

/** A body in pooled memory: `bytes` until `release()`, after which they must not be read again. */
export interface PooledBody {
  bytes: Buffer
  release: () => void
}

export interface BodyPoolOptions {
  /** Texts shorter than this (in UTF-16 units), or bodies of fewer bytes, are not pooled: small buffers are cheap. */
  minLength?: number
  /** The largest buffer kept (at most `maxFreeBytes`); longer bodies are not pooled. */
  maxBytes?: number
  /** Buffers kept free per size, beyond which a released one is left to the garbage collector. */
  freePerSize?: number
  /** Bytes kept free in all, likewise (CMS_BODY_POOL_BYTES); 0 pools nothing. */
  maxFreeBytes?: number
}

const MAX_BYTES = 8 * 1024 * 1024
const FREE_PER_SIZE = 4
/** The longest UTF-8 sequence: room left after a write proves nothing was cut off. */
const MAX_CHAR_BYTES = 4

export class BodyPool {
  readonly #minLength: number
  readonly #maxBytes: number
  readonly #freePerSize: number
  readonly #maxFreeBytes: number
  /** Free buffers by size (a power of two). */
  readonly #free = new Map<number, Buffer[]>()
  #freeBytes = 0

  constructor (options: BodyPoolOptions = {}) {
    // Buffer.from's own threshold (half the documented Buffer.poolSize, read when the pool is
    // made, as Node reads it on each call): shorter texts go into its shared slab.
    this.#minLength = options.minLength ?? Buffer.poolSize >>> 1
    this.#freePerSize = options.freePerSize ?? FREE_PER_SIZE
    this.#maxFreeBytes = options.maxFreeBytes ?? DEFAULT_BODY_POOL_BYTES
    // A buffer that could never be kept free is not worth lending.
    this.#maxBytes = Math.min(options.maxBytes ?? MAX_BYTES, this.#maxFreeBytes)
  }

  /**
   * `text` as UTF-8 in pooled memory, or null when it is not worth pooling (short, or too long):
   * the caller then encodes it as usual.
   */
  encode (text: string): PooledBody | null {
    if (text.length < this.#minLength) return null
    // UTF-8 takes at least one byte per UTF-16 unit; most JSON is ASCII, one byte each. A text
    // that does not fit is tried once more at three bytes per unit, the most it can need.
    for (const need of [text.length + MAX_CHAR_BYTES, text.length * 3 + MAX_CHAR_BYTES]) {
      const size = bufferSize(need)
      if (size > this.#maxBytes) return null
      const buffer = this.#take(size)
      const written = buffer.write(text, 0, 'utf8')
      if (written <= buffer.length - MAX_CHAR_BYTES) return this.#lend(buffer, written)
      this.#give(buffer)
    }
    return null
  }

  /**
   * `bytes` of pooled memory to write a body into, or null when not worth pooling (fewer bytes
   * than `minLength`, or a buffer larger than `maxBytes`): the caller then allocates as usual.
   */
  alloc (bytes: number): PooledBody | null {
    if (bytes < this.#minLength) return null
    const size = bufferSize(bytes)
    if (size > this.#maxBytes) return null
    return this.#lend(this.#take(size), bytes)
  }

  /** Buffers kept free, for tests. */
  get freeCount (): number {
    let n = 0
    for (const list of this.#free.values()) n += list.length
    return n
  }

  /** Bytes of the buffers kept free, for tests: never more than `maxFreeBytes`. */
  get freeBytes (): number {
    return this.#freeBytes
  }

  /** A buffer of `size` bytes (a power of two), free or new. */
  #take (size: number): Buffer {
    const free = this.#free.get(size)?.pop()
    if (free === undefined) return Buffer.allocUnsafeSlow(size)
    this.#freeBytes -= size
    return free
  }

  #give (buffer: Buffer): void {
    let list = this.#free.get(buffer.length)
    if (list === undefined) this.#free.set(buffer.length, list = [])
    if (list.length >= this.#freePerSize || this.#freeBytes + buffer.length > this.#maxFreeBytes) return
    list.push(buffer)
    this.#freeBytes += buffer.length
  }

  #lend (buffer: Buffer, length: number): PooledBody {
    let released = false
    return {
      bytes: buffer.subarray(0, length),
      release: () => {
        if (released) return
        released = true
        this.#give(buffer)
      }
    }
  }
}

/** The size of the buffer a body of `need` bytes is pooled in: a power of two, 1 KB at least. */
function bufferSize (need: number): number {
  let size = 1024
  while (size < need) size *= 2
  return size
}
