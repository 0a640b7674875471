// Reading the file store's change log (format.ts) from disk in pieces, so that records the log
// does not keep in memory (tombstones, changes/file.ts) are found without loading the file: the
// lines are in increasing seq order, so a binary search over byte offsets finds where a seq
// starts, and a forward read in chunks goes on from there.
import type { FileHandle } from 'node:fs/promises'

/** What the reads need of a file handle. */
export type ReadSource = Pick<FileHandle, 'read'>

const NEWLINE = 0x0a
/** Bytes read at a time by a forward read. */
const CHUNK_BYTES = 65_536
/** Bytes read at each step of the binary search: a record line is about a hundred. */
const PROBE_BYTES = 4096
const SEQ_PREFIX_RE = /^\[(\d+),/

/** A line's seq, read from its start without parsing the rest; 0 for the header or a line that is not a record's. */
export function seqOfLine (text: string): number {
  const m = SEQ_PREFIX_RE.exec(text)
  return m === null ? 0 : Number(m[1])
}

/**
 * The whole lines (newline ended) from byte `start`, a line start, to `end`, a chunk at a time:
 * each batch holds every line that chunk completed. A last line without its newline is not given.
 */
export async function * lineBatches (source: ReadSource, start: number, end: number): AsyncGenerator<string[]> {
  let pos = start
  let carry = Buffer.alloc(0)
  while (pos < end) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, end - pos))
    const { bytesRead } = await source.read(chunk, 0, chunk.length, pos)
    if (bytesRead === 0) return
    pos += bytesRead
    const data = carry.length === 0 ? chunk.subarray(0, bytesRead) : Buffer.concat([carry, chunk.subarray(0, bytesRead)])
    const lines: string[] = []
    let lineStart = 0
    for (let nl = data.indexOf(NEWLINE); nl >= 0; nl = data.indexOf(NEWLINE, lineStart)) {
      lines.push(data.toString('utf8', lineStart, nl))
      lineStart = nl + 1
    }
    // Copied: a subarray would keep the whole chunk alive.
    carry = Buffer.from(data.subarray(lineStart))
    if (lines.length > 0) yield lines
  }
}

/** The first line start after byte `at` and before `end`, with its seq; null when there is none within a probe. */
async function lineAfter (source: ReadSource, at: number, end: number): Promise<{ start: number, next: number, seq: number } | null> {
  const buf = Buffer.allocUnsafe(Math.min(PROBE_BYTES, end - at))
  const { bytesRead } = await source.read(buf, 0, buf.length, at)
  const data = buf.subarray(0, bytesRead)
  const nl = data.indexOf(NEWLINE)
  if (nl < 0) return null
  const next = data.indexOf(NEWLINE, nl + 1)
  if (next < 0) return null
  return { start: at + nl + 1, next: at + next + 1, seq: seqOfLine(data.toString('utf8', nl + 1, next)) }
}

/**
 * The offset of the first line with a seq above `seq`, searching the line starts from `start`
 * (the first line, the header's, counts as seq 0) to `end`; `end` when there is none.
 */
export async function firstLineAbove (source: ReadSource, start: number, end: number, seq: number): Promise<number> {
  let lo = start
  let hi = end
  // Invariant: the answer is a line start in [lo, hi], and every line before lo has a seq at or below `seq`.
  while (hi - lo > PROBE_BYTES) {
    const mid = lo + Math.floor((hi - lo) / 2)
    const line = await lineAfter(source, mid, hi)
    if (line === null) break
    if (line.seq <= seq) lo = line.next
    else hi = line.start
  }
  let offset = lo
  for await (const lines of lineBatches(source, lo, hi)) {
    for (const text of lines) {
      if (seqOfLine(text) > seq) return offset
      offset += Buffer.byteLength(text) + 1
    }
  }
  return hi
}
