// Response compression (contract §11): which answers are compressed, in which encoding, and
// the compressed bytes themselves. Pure: plugins/compression.ts applies it to replies.
import type { Transform } from 'node:stream'
import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync, type BrotliOptions, type ZlibOptions } from 'node:zlib'
import { negotiate } from '@fastify/accept-negotiator'

export type Encoding = 'br' | 'gzip'

/** Bodies shorter than this are sent as they are: the saving would not pay for the work. */
export const MIN_COMPRESSED_BYTES = 1024

/** In the order preferred when the client accepts both equally. */
const ENCODINGS: Encoding[] = ['br', 'gzip']

// Bodies are compressed as they are sent, so speed counts more than the last bytes. Measured here
// (best of 15 runs) on the bench's page of 100 entries (27 KB of JSON): brotli 3 gives 1.5 KB in
// 80 µs, brotli 4 the same in 110 µs, brotli 11 1.3 KB in 40 ms; gzip 6 gives 2.6 KB in 100 µs.
// On 36 KB of prose in JSON, brotli 3 gives 11.7 KB in 0.3 ms and brotli 4 11.4 KB in 0.6 ms.
const BROTLI: BrotliOptions = { params: { [constants.BROTLI_PARAM_QUALITY]: 3 } }
const GZIP: ZlibOptions = { level: 6 }

/**
 * The encoding a request's `Accept-Encoding` lets an answer be sent in (`br` preferred, then
 * `gzip`, by their q-values), or null: none of them, or no header.
 */
export function acceptedEncoding (acceptEncoding: string | undefined): Encoding | null {
  if (acceptEncoding === undefined || acceptEncoding === '') return null
  // Codings are case-insensitive; `x-gzip` is gzip (RFC 9110 §8.4.1.3).
  return negotiate(acceptEncoding.toLowerCase().replace(/\bx-gzip\b/g, 'gzip'), ENCODINGS)
}

// Text, JSON, JavaScript and XML. Not images (SVG included), audio, video, fonts or archives:
// they are compressed already, or served as the files they are.
const COMPRESSIBLE = /^(?:text\/(?!event-stream)|application\/(?:json|javascript|ecmascript|xml|x-ndjson|[\w.-]+\+(?:json|xml))(?:[;\s]|$))/i

/** Whether a body of this `Content-Type` is worth compressing. */
export function compressibleType (contentType: string): boolean {
  return COMPRESSIBLE.test(contentType)
}

/** `body` compressed in `encoding`, at the quality chosen for answers made as they are sent. */
export function compress (body: Buffer | string, encoding: Encoding): Buffer {
  return encoding === 'br'
    ? brotliCompressSync(body, { ...BROTLI, params: { ...BROTLI.params, [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(body) } })
    : gzipSync(body, GZIP)
}

/** A stream that compresses what is piped through it in `encoding` (for file answers). */
export function compressStream (encoding: Encoding): Transform {
  return encoding === 'br' ? createBrotliCompress(BROTLI) : createGzip(GZIP)
}

/**
 * Compressed copies of the bodies of kept answers, made once per encoding and then sent as they
 * are, so a cache hit does not compress again. They are keyed by the body's Buffer, which the
 * response cache keeps as the answer that was first sent (it stores it in a record of its own),
 * and each lives as long as that Buffer (a WeakMap entry): when the cache lets an answer go, its
 * copies go with it. Only for bodies that never change: not pooled memory, which is reused.
 */
export class CompressedCopies {
  readonly #copies = new WeakMap<Buffer, Partial<Record<Encoding, Buffer>>>()

  /** `body` compressed in `encoding`: the kept copy, made now if there is none yet. */
  get (body: Buffer, encoding: Encoding): Buffer {
    let copies = this.#copies.get(body)
    if (copies === undefined) {
      copies = {}
      this.#copies.set(body, copies)
    }
    return (copies[encoding] ??= compress(body, encoding))
  }

  /** The copy kept for `body` in `encoding`, if one was made. */
  kept (body: Buffer, encoding: Encoding): Buffer | undefined {
    return this.#copies.get(body)?.[encoding]
  }
}
