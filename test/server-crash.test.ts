// The change log's crash test at the level of the process (issue 22): a real server (server.ts) on
// each store, several clients writing at once (creates, PUTs, PATCHes that publish and unpublish,
// deletes), `kill -9` at a random moment, then the data dir is opened again and checked:
// - every acknowledged write is in the log: its entry's record has the write's seq or a higher
//   one, and says what the last acknowledged write or a later one in flight did (op and status),
//   and what the entry now is;
// - seqs follow acknowledgement: a write acknowledged before another was sent has the lower seq;
//   no seq is given twice, and seqs go on above the earlier cycles';
// - every acknowledged write's webhook payload is in the outbox, with its seq, status and
//   previous_status (contract §6): that is how the test learns each write's seq, as a receiver would.
// The next cycle starts the server again on the same data dir. Both stores run side by side.
// More cycles: LECTERN_CRASH_CYCLES=20 npx tap test/server-crash.test.ts (the file's timeout grows with them).
import path from 'node:path'
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { createStore } from '../lib/store/index.js'
import { OUTBOX_FILE } from '../plugins/webhooks.js'
import type { ChangeRecord } from '../types/changes.js'
import type { EntryStatus } from '../types/store.js'
import { STORES, freePort, healthy, startServer, tempDir, type Env, type ServerProcess, type StoreName } from './helper.js'
import { closedPortUrl } from './lib/webhooks/receiver.js'

// Two by default: each cycle starts a server per store, which takes seconds on a busy machine.
const CYCLES = Number(process.env.LECTERN_CRASH_CYCLES ?? 2)
const CLIENTS = 6
const COLLECTION = 'crash'
const SCOPE = { environment: 'default', locale: null }

type Op = 'create' | 'put' | 'patch' | 'delete'

/** One write a client sent: what it asked for, when, and (once answered) when it was acknowledged. */
interface Sent {
  slug: string
  op: Op
  /** The entry's status after the write (null: deleted), and before it (null: none). */
  status: EntryStatus | null
  previous: EntryStatus | null
  sentAt: number
  ackedAt: number | null
}

interface Payload { event: string, slug: string, seq: number, status: EntryStatus | null, previous_status: EntryStatus | null }

const EVENT_OF: Record<Op, string> = { create: 'content.created', put: 'content.updated', patch: 'content.updated', delete: 'content.deleted' }

/** The next write of a client over its own entries: a create, or a change of one it holds. */
function nextWrite (live: Map<string, EntryStatus>, newSlug: () => string): { slug: string, op: Op, status: EntryStatus | null, body?: object } {
  const status: EntryStatus = Math.random() < 0.5 ? 'draft' : 'published'
  const slugs = [...live.keys()]
  if (slugs.length === 0 || Math.random() < 0.3) {
    const slug = newSlug()
    return { slug, op: 'create', status, body: { _slug: slug, _status: status, title: 'new', n: 0 } }
  }
  const slug = slugs[Math.floor(Math.random() * slugs.length)] as string
  const roll = Math.random()
  if (roll < 0.35) return { slug, op: 'put', status, body: { _status: status, title: 'put', n: 1 } }
  // A PATCH flips the status (a publish or an unpublish) or edits a field and keeps it.
  if (roll < 0.8) return Math.random() < 0.5 ? { slug, op: 'patch', status: live.get(slug) as EntryStatus, body: { n: 2 } } : { slug, op: 'patch', status, body: { _status: status } }
  return { slug, op: 'delete', status: null }
}

/** One client: writes to its own entries, one request at a time, until the server is gone. */
async function client (base: string, name: string, log: Sent[], failures: string[], acked: () => void): Promise<void> {
  const live = new Map<string, EntryStatus>()
  let n = 0
  for (;;) {
    const w = nextWrite(live, () => `${name}-${n++}`)
    const sent: Sent = { slug: w.slug, op: w.op, status: w.status, previous: w.op === 'create' ? null : live.get(w.slug) as EntryStatus, sentAt: performance.now(), ackedAt: null }
    log.push(sent)
    const method = { create: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE' }[w.op]
    let status: number
    let text: string
    try {
      const res = await fetch(`${base}/api/content/${COLLECTION}${w.op === 'create' ? '' : `/${w.slug}`}`, {
        method,
        ...(w.body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(w.body) })
      })
      text = await res.text()
      status = res.status
    } catch {
      return // the server is gone: this write stays in flight
    }
    if (status >= 300) {
      failures.push(`${method} ${w.slug}: ${status} ${text}`)
      return
    }
    sent.ackedAt = performance.now()
    if (w.status === null) live.delete(w.slug)
    else live.set(w.slug, w.status)
    acked()
  }
}

/** The start of the server before, while one is starting: starts are one at a time (see startHealthy). */
let starting: Promise<unknown> = Promise.resolve()

/**
 * A server started and answering /health. Each start loads every TypeScript source through the
 * test loader, which on a busy machine can outlast Fastify's plugin timeout (10 s): starts are
 * made one at a time, and a start that failed for that reason alone is made again (three tries).
 */
async function startHealthy (t: Test, env: Env, what: string): Promise<{ server: ServerProcess, port: number }> {
  const run = starting.then(async () => {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort()
      const started = Date.now()
      const server = startServer({ ...env, CMS_PORT: String(port) })
      t.teardown(() => { if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL') })
      if (await healthy(port, server.exited, 60_000)) {
        t.comment(`${what}: serving after ${Date.now() - started} ms`)
        return { server, port }
      }
      server.child.kill('SIGKILL')
      await server.exited
      if (attempt === 3 || !server.output().includes('did not start in time')) throw new Error(`${what}: the server did not start: ${server.output().slice(-2000)}`)
      t.comment(`${what}: start-up timed out (try ${attempt}), starting again`)
    }
  })
  starting = run.catch(() => {})
  return await run
}

/** Starts the server on the data dir, writes from every client until `acks` writes are acknowledged, then kills it. */
async function crashCycle (t: Test, store: StoreName, dataDir: string, hook: string, cycle: number, acks: number): Promise<{ sent: Sent[], output: string }> {
  const { server, port } = await startHealthy(t, {
    CMS_STORE: store,
    CMS_DATA_DIR: dataDir,
    CMS_HOST: '127.0.0.1',
    CMS_SEED: 'false',
    CMS_LOG_LEVEL: 'warn',
    // Never reachable, and not retried for an hour: each payload stays in the outbox for the test to read.
    CMS_WEBHOOKS: hook,
    CMS_WEBHOOK_BACKOFF_MS: '3600000'
  }, `${store}, cycle ${cycle}`)
  const base = `http://127.0.0.1:${port}`
  if (cycle === 0) {
    const res = await fetch(`${base}/api/schemas`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: COLLECTION, fields: { title: { field_type: 'string' }, n: { field_type: 'integer' } } })
    })
    t.equal(res.status, 201, `${store}: the schema`)
  }
  const sent: Sent[] = []
  const failures: string[] = []
  let count = 0
  const acked = (): void => {
    // At a random moment: after the acks-th acknowledgement, with the other clients' writes in flight.
    if (++count === acks) server.child.kill('SIGKILL')
  }
  await Promise.all(Array.from({ length: CLIENTS }, async (_, i) => { await client(base, `c${cycle}-k${i}`, sent, failures, acked) }))
  // Every client stopped on a refused write before the kill: the failures say why.
  if (server.child.signalCode === null) server.child.kill('SIGKILL')
  t.equal(await server.exited, null, `${store}, cycle ${cycle}: killed`)
  t.equal(server.child.signalCode, 'SIGKILL')
  t.strictSame(failures, [], `${store}, cycle ${cycle}: no write was refused`)
  return { sent, output: server.output() }
}

/** Every content payload recorded in the outbox. */
function outboxPayloads (dataDir: string): Payload[] {
  const db = new Database(path.join(dataDir, OUTBOX_FILE))
  try {
    return (db.prepare("SELECT body FROM deliveries WHERE event LIKE 'content.%'").pluck().all() as string[]).map(body => JSON.parse(body) as Payload)
  } finally {
    db.close()
  }
}

interface Reopened {
  /** The log, in seq order. */
  records: ChangeRecord[]
  /** The status of each entry written that exists. */
  entries: Map<string, EntryStatus>
  latest: number
}

/** The data dir opened again, as the server opens its store. */
async function reopen (store: StoreName, dataDir: string, slugs: readonly string[]): Promise<Reopened> {
  const opened = createStore(store, { dataDir })
  await opened.open()
  try {
    const records: ChangeRecord[] = []
    for (let after = 0; ;) {
      const page = await opened.changes.since(after, 1000, SCOPE)
      records.push(...page.records)
      after = page.upTo
      if (!page.more) break
    }
    const found = await opened.getMany(SCOPE, COLLECTION, slugs)
    const entries = new Map([...found].map(([slug, entry]) => [slug, entry.status]))
    return { records, entries, latest: await opened.changes.latestSeq() }
  } finally {
    await opened.close()
  }
}

function bySlug<T extends { slug: string }> (items: readonly T[]): Map<string, T[]> {
  const map = new Map<string, T[]>()
  for (const item of items) map.set(item.slug, [...(map.get(item.slug) ?? []), item])
  return map
}

const said = (w: Sent): string => `${w.status === null ? 'delete' : 'upsert'}:${String(w.status)}`
const recorded = (r: ChangeRecord): string => `${r.op}:${String(r.status)}`

/**
 * Each acknowledged write's payload: a client sends one write to an entry at a time, so the
 * entry's payloads in seq order are its writes in the order sent (the last one may be a write
 * in flight that committed). Puts each write's seq in `seqOf`.
 */
function payloadProblems (writes: readonly Sent[], payloads: readonly Payload[], seqOf: Map<Sent, number>): string[] {
  const out: string[] = []
  const acked = writes.filter(w => w.ackedAt !== null)
  const slug = (writes[0] as Sent).slug
  const own = [...payloads].sort((a, b) => a.seq - b.seq)
  if (own.length < acked.length || own.length > writes.length) out.push(`${slug}: ${acked.length} acknowledged writes, ${own.length} payloads`)
  acked.forEach((w, i) => {
    const p = own[i]
    if (p === undefined || p.event !== EVENT_OF[w.op] || p.status !== w.status || p.previous_status !== w.previous) {
      out.push(`${slug}: ${w.op} to ${String(w.status)} from ${String(w.previous)} has the payload ${JSON.stringify(p)}`)
    } else seqOf.set(w, p.seq)
  })
  return out
}

/**
 * The entry's record: the last acknowledged write's seq and change, or, with a write in flight
 * after it, a higher seq saying what one of the two did (the write in flight, or the entry as it
 * is when that write did not land); and what the entry is.
 */
function recordProblems (writes: readonly Sent[], seqOf: ReadonlyMap<Sent, number>, record: ChangeRecord | undefined, entry: EntryStatus | undefined): string[] {
  const last = writes.filter(w => w.ackedAt !== null).at(-1)
  if (last === undefined) return []
  const slug = last.slug
  const inFlight = writes.at(-1) !== last
  const candidates = inFlight ? [last, writes.at(-1) as Sent] : [last]
  const seq = seqOf.get(last) ?? Infinity
  if (record === undefined || record.seq < seq || (!inFlight && record.seq !== seq)) {
    return [`${slug}: acknowledged seq ${seqOf.get(last) ?? '?'}${inFlight ? ' (a write in flight after it)' : ''}, the log has ${record?.seq ?? 'nothing'}`]
  }
  const out: string[] = []
  if (!candidates.map(said).includes(recorded(record))) out.push(`${slug}: the log says ${recorded(record)}, the writes ${candidates.map(said).join(' or ')}`)
  if (recorded(record) !== (entry === undefined ? 'delete:null' : `upsert:${entry}`)) out.push(`${slug}: the log says ${recorded(record)}, the entry is ${entry ?? 'absent'}`)
  return out
}

/** What is wrong with the reopened data dir after a cycle; `before` is the highest seq of the earlier cycles. */
function problems (sent: readonly Sent[], payloads: readonly Payload[], log: Reopened, before: number): string[] {
  const out: string[] = []
  const seqOf = new Map<Sent, number>()
  const payloadsOf = bySlug(payloads)
  const records = new Map(log.records.map(r => [r.slug, r]))
  for (const [slug, writes] of bySlug(sent)) {
    out.push(...payloadProblems(writes, payloadsOf.get(slug) ?? [], seqOf))
    out.push(...recordProblems(writes, seqOf, records.get(slug), log.entries.get(slug)))
  }
  out.push(...orderProblems([...seqOf].map(([w, seq]) => ({ sentAt: w.sentAt, ackedAt: w.ackedAt as number, seq })), before))
  const seqs = payloads.map(p => p.seq)
  if (new Set(seqs).size !== seqs.length) out.push('a seq was given to two writes')
  if (seqs.some(s => s > log.latest)) out.push(`a payload's seq is above the log's latest ${log.latest}`)
  return out
}

/** Seqs above the earlier cycles', and a write acknowledged before another was sent has the lower seq. */
function orderProblems (writes: Array<{ sentAt: number, ackedAt: number, seq: number }>, before: number): string[] {
  const out: string[] = []
  const byAck = [...writes].sort((a, b) => a.ackedAt - b.ackedAt)
  // The highest seq acknowledged up to each point in time.
  const highest: number[] = []
  for (const w of byAck) highest.push(Math.max(highest.at(-1) ?? 0, w.seq))
  for (const w of writes) {
    if (w.seq <= before) out.push(`seq ${w.seq} is not above the earlier cycles' ${before}`)
    let lo = 0
    let hi = byAck.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((byAck[mid] as { ackedAt: number }).ackedAt < w.sentAt) lo = mid + 1
      else hi = mid
    }
    const earlier = lo === 0 ? 0 : highest[lo - 1] as number
    if (earlier >= w.seq) out.push(`seq ${w.seq} was sent after seq ${earlier} was acknowledged`)
  }
  return out
}

t.setTimeout(Math.max(120_000, CYCLES * 40_000))

t.test('every acknowledged write survives kill -9 of the server, in the log and in order, on both stores', async t => {
  const hook = await closedPortUrl()
  await Promise.all(STORES.map(async store => {
    const dataDir = path.join(tempDir(t), 'data')
    let before = 0
    const sent: Sent[] = []
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const wanted = 20 + Math.floor(Math.random() * 200)
      const what = `${store}, cycle ${cycle} (killed after ${wanted} acknowledged writes)`
      const run = await crashCycle(t, store, dataDir, hook, cycle, wanted)
      sent.push(...run.sent)
      t.ok(run.sent.filter(w => w.ackedAt !== null).length >= wanted, `${what}: the clients were writing`)
      const log = await reopen(store, dataDir, [...new Set(run.sent.map(w => w.slug))])
      const slugs = new Set(run.sent.map(w => w.slug))
      const payloads = outboxPayloads(dataDir).filter(p => slugs.has(p.slug))
      t.strictSame(problems(run.sent, payloads, log, before), [], `${what}: every acknowledged write is in the log, in order`, { output: run.output.slice(-2000) })
      t.strictSame(log.records.map(r => r.seq), [...new Set(log.records.map(r => r.seq))].sort((a, b) => a - b), `${what}: the log reads in seq order, once each`)
      before = log.latest
    }
    t.ok(sent.some(w => w.op === 'patch' && w.previous === 'published' && w.status === 'draft' && w.ackedAt !== null), `${store}: unpublishes were among the writes`)
  }))
})
