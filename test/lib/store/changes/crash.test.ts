// The crash test of both change logs: a child process writes changes to both at once (eight
// writers per log: creates, updates and deletes) and prints each seq once its promise has
// resolved; the test kill -9s it at a random moment, reopens each log and checks that every
// acknowledged change is there, in order, whole and once, and that seqs go on above it. Several
// cycles on the same data dirs. More cycles: LECTERN_CRASH_CYCLES=50 npx tap test/lib/store/changes/crash.test.ts
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { CHANGE_LOG_FILE, parseChangeLog } from '../../../../lib/store/changes/format.js'
import type { ChangeLog, ChangeRecord } from '../../../../types/changes.js'
import { sourceUrl, tempDir } from '../../../helper.js'
import { killWhen } from '../../../fixtures/processes.js'
import { LOG_KINDS, openLog, type LogKind } from './drivers.js'

const CYCLES = Number(process.env.LECTERN_CRASH_CYCLES ?? 3)
const WRITERS = 8

interface Ack {
  writer: number
  seq: number
  slug: string
  op: string
  status: string
}

type Dirs = Record<LogKind, string>

/** The child: writes to every log until it is killed, one line per resolved write. */
function childScript (dirs: Dirs, cycle: number): string {
  return `const { openLog, upsert, tombstone } = await import(${JSON.stringify(sourceUrl('test', 'lib', 'store', 'changes', 'drivers.ts'))})
const dirs = ${JSON.stringify(dirs)}
// A small tail: the file log rewrites itself every few dozen writes, so kills land in rewrites too.
const drivers = await Promise.all(Object.entries(dirs).map(async ([kind, dir]) => [kind, await openLog(kind, dir, { tailKeys: 16 })]))
process.stdout.write('ready\\n')
const writer = async (kind, driver, w) => {
  let last = null
  for (let n = 0; ; n++) {
    const at = new Date().toISOString()
    let change
    if (n % 3 === 2) change = n % 2 === 1 ? tombstone(last, at) : upsert(last, at, { status: 'draft' })
    else change = upsert(last = 'c${cycle}-w' + w + '-' + n, at)
    const seq = await driver.write(change)
    process.stdout.write(kind + ' ' + w + ' ' + seq + ' ' + change.slug + ' ' + change.op + ' ' + change.status + '\\n')
  }
}
for (const [kind, driver] of drivers) for (let w = 0; w < ${WRITERS}; w++) writer(kind, driver, w)
`
}

/** Runs the child until each log has acknowledged `acks` writes, kills it, and returns every acknowledgement it printed, per log. */
async function crashAfter (t: Test, dirs: Dirs, cycle: number, acks: number): Promise<Record<LogKind, Ack[]>> {
  // Each log has acknowledged `acks` writes: kill it now, with writes in flight.
  const lines = await killWhen(t, childScript(dirs, cycle), stdout => LOG_KINDS.every(kind => stdout.split(`\n${kind} `).length > acks))
  const out: Record<LogKind, Ack[]> = { sqlite: [], file: [] }
  // Every whole line is an acknowledged write (after the first, 'ready'); a line cut by the kill is not.
  for (const line of lines.slice(1)) {
    const [kind, writer, seq, slug, op, status] = line.split(' ')
    out[kind as LogKind].push({ writer: Number(writer), seq: Number(seq), slug: slug as string, op: op as string, status: status as string })
  }
  return out
}

async function readAll (log: ChangeLog): Promise<ChangeRecord[]> {
  const out: ChangeRecord[] = []
  for (let after = 0; ;) {
    const page = await log.since(after, 500, { environment: 'default', locale: null })
    out.push(...page.records)
    after = page.upTo
    if (!page.more) return out
  }
}

/** What is wrong with the reopened log, given the acknowledgements of the cycle and the highest seq before it. */
function problems (acks: readonly Ack[], records: readonly ChangeRecord[], before: number): string[] {
  const out: string[] = []
  const lastPerWriter = new Map<number, number>()
  const lastPerSlug = new Map<string, Ack>()
  for (const ack of acks) {
    if (ack.seq <= before) out.push(`seq ${ack.seq} is not above the earlier cycles' ${before}`)
    if (ack.seq <= (lastPerWriter.get(ack.writer) ?? 0)) out.push(`writer ${ack.writer}: seq ${ack.seq} after a higher one`)
    lastPerWriter.set(ack.writer, ack.seq)
    if (ack.seq > (lastPerSlug.get(ack.slug)?.seq ?? 0)) lastPerSlug.set(ack.slug, ack)
  }
  const bySlug = new Map(records.map(r => [r.slug, r]))
  for (const [slug, ack] of lastPerSlug) {
    const record = bySlug.get(slug)
    // A higher seq can only be a later write of the same entry, in flight when the writer died.
    if (record === undefined || record.seq < ack.seq) out.push(`${slug}: acknowledged seq ${ack.seq}, the log has ${record?.seq ?? 'nothing'}`)
    else if (record.seq === ack.seq && (record.op !== ack.op || String(record.status) !== ack.status)) out.push(`${slug}: seq ${ack.seq} is not the change acknowledged`)
  }
  return out
}

t.test('every acknowledged change survives kill -9, on both logs', async t => {
  const dirs: Dirs = { sqlite: tempDir(t), file: tempDir(t) }
  const before: Record<LogKind, number> = { sqlite: 0, file: 0 }
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const wanted = 5 + Math.floor(Math.random() * 150)
    const acks = await crashAfter(t, dirs, cycle, wanted)
    for (const kind of LOG_KINDS) {
      const what = `cycle ${cycle}, ${kind} (killed after ${wanted} writes to each log)`
      t.ok(acks[kind].length >= wanted, `${what}: the writer was running`)
      const logFile = path.join(dirs[kind], 'content', CHANGE_LOG_FILE)
      if (kind === 'file') t.not(parseChangeLog(readFileSync(logFile)).damage, 'middle', `${what}: at most a torn last line`)
      const driver = await openLog(kind, dirs[kind])
      const records = await readAll(driver.log)
      t.strictSame(problems(acks[kind], records, before[kind]), [], `${what}: all ${acks[kind].length} acknowledged writes are there`)
      t.strictSame(records.map(r => r.seq), [...new Set(records.map(r => r.seq))].sort((a, b) => a - b), `${what}: in order, once each`)
      before[kind] = Math.max(await driver.log.latestSeq(), ...acks[kind].map(a => a.seq))
      await driver.close()
      if (kind === 'file') t.equal(parseChangeLog(readFileSync(logFile)).damage, 'none', `${what}: whole after reopening`)
    }
  }
})
