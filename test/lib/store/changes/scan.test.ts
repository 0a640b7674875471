// Reading the change log from disk in pieces: whole lines a chunk at a time, and the binary
// search for where a seq starts, checked against a linear reading of the same bytes.
import t from 'tap'
import { firstLineAbove, lineBatches, seqOfLine, type ReadSource } from '../../../../lib/store/changes/scan.js'

/** A file in memory: reads past its end read nothing, as a file's do. */
function source (bytes: Buffer): ReadSource {
  return {
    read: (async (buffer: Buffer, offset: number, length: number, position: number) => {
      const n = Math.max(0, Math.min(length, bytes.length - position))
      bytes.copy(buffer, offset, position, position + n)
      return { bytesRead: n, buffer }
    }) as unknown as ReadSource['read']
  }
}

/** A header, then record-like lines with growing seqs, some of them longer than a probe. */
function logText (seqs: number[], long: Set<number>): string {
  return '{"log":"lectern-changes","version":1,"horizon":0}\n' +
    seqs.map(seq => `[${seq},"${long.has(seq) ? 'x'.repeat(5000) : 'y'}"]\n`).join('')
}

async function allLines (src: ReadSource, start: number, end: number): Promise<string[]> {
  const out: string[] = []
  for await (const lines of lineBatches(src, start, end)) out.push(...lines)
  return out
}

t.test('seqOfLine reads a record line\'s seq, 0 for anything else', async t => {
  t.equal(seqOfLine('[42,"default"]'), 42)
  t.equal(seqOfLine('{"log":"lectern-changes"}'), 0)
  t.equal(seqOfLine('garbage'), 0)
})

t.test('lineBatches gives whole lines across chunks, without a last line lacking its newline', async t => {
  const seqs = Array.from({ length: 3000 }, (_, i) => i + 1)
  const text = logText(seqs, new Set([10, 2000]))
  const bytes = Buffer.from(text + '[3001,"torn')
  const lines = await allLines(source(bytes), 0, bytes.length + 100)
  t.equal(lines.length, 3001, 'the header and every record, not the torn line')
  t.strictSame(lines.slice(1).map(seqOfLine), seqs)
  t.equal(lines.join('\n') + '\n', text)
})

t.test('firstLineAbove finds the offset of the first line above a seq, as a linear reading does', async t => {
  const seqs: number[] = []
  for (let seq = 1; seqs.length < 2000; seq += 1 + (seqs.length % 3)) seqs.push(seq)
  const long = new Set(seqs.filter((_, i) => i % 97 === 5))
  const bytes = Buffer.from(logText(seqs, long))
  const src = source(bytes)
  const starts: Array<{ offset: number, seq: number }> = []
  let offset = 0
  for (const line of await allLines(src, 0, bytes.length)) {
    starts.push({ offset, seq: seqOfLine(line) })
    offset += line.length + 1
  }
  const expected = (seq: number): number => starts.find(s => s.seq > seq)?.offset ?? bytes.length
  for (const seq of [0, 1, 2, 3, 50, 51, 999, 1500, 2500, (seqs.at(-1) ?? 0) - 1, seqs.at(-1) ?? 0, 1e9, ...long]) {
    t.equal(await firstLineAbove(src, 0, bytes.length, seq), expected(seq), `above ${seq}`)
  }
})
