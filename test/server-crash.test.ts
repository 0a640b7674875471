// The crash test at the level of the process (issues 22 and 28): a real server (server.ts) on
// each store, 20 clients writing at once (creates, PUTs, PATCHes that publish, unpublish, edit or
// re-point a reference, deletes), `kill -9` at a random moment, then the data dir is opened again
// and checked:
// - every acknowledged write is in the log: its entry's record has the write's seq or a higher
//   one, and says what the last acknowledged write or a later one in flight did (op and status),
//   and what the entry now is; the entry's data is that write's, whole (nothing lost, reverted
//   or torn);
// - seqs follow acknowledgement: a write acknowledged before another was sent has the lower seq;
//   no seq is given twice, and seqs go on above the earlier cycles';
// - every acknowledged write's webhook payload is in the outbox, with its seq, status and
//   previous_status (contract §6): that is how the test learns each write's seq, as a receiver would.
// The next cycle starts the server again on the same data dir and, before any write, checks what
// the start made of the crash: the reverse index (`/referrers` of each target) lists exactly the
// entries whose reference names it, and the outbox's latest event of every entry ever written
// says what the entry is, with its log record's seq (events a crash left unrecorded are announced
// at start). A last start checks the last cycle. Both stores run side by side.
// More cycles: LECTERN_CRASH_CYCLES=20 npx tap test/server-crash.test.ts (the file's timeout grows with them).
import path from 'node:path'
import Database from '../lib/sqlite-driver.js'
import pg from 'pg'
import t, { type Test } from 'tap'
import { createStore } from '../lib/store/index.js'
import { OUTBOX_FILE } from '../plugins/webhooks.js'
import type { ChangeRecord } from '../types/changes.js'
import type { EntryStatus } from '../types/store.js'
import { STORES, freePort, healthy, startServer, storeEnv, tempDir, type Env, type ServerProcess, type StoreName } from './helper.js'
import { closedPortUrl } from './lib/webhooks/receiver.js'

// Ten by default (issue 28): each cycle starts a server per store, a few seconds each on two idle
// cores; LECTERN_CRASH_CYCLES=3 for a quick run (README: Tests).
const CYCLES = Number(process.env.LECTERN_CRASH_CYCLES ?? 10)
const CLIENTS = 20
const COLLECTION = 'crash'
/** Entries the writes reference, never deleted: the reverse index is checked on them. */
const TARGET_COLLECTION = 'crash_target'
const TARGETS = ['t0', 't1', 't2']
const SCOPE = { environment: 'default', locale: null }

type Op = 'create' | 'put' | 'patch' | 'delete'

type Data = Record<string, unknown>

/** An entry as a client knows it. */
interface Held { status: EntryStatus, data: Data }

/** One write a client sent: what it asked for, when, and (once answered) when it was acknowledged. */
interface Sent {
  slug: string
  op: Op
  /** The entry's status after the write (null: deleted), and before it (null: none). */
  status: EntryStatus | null
  previous: EntryStatus | null
  /** The entry's data after the write (null: deleted). */
  data: Data | null
  sentAt: number
  ackedAt: number | null
}

interface Payload { event: string, collection: string, slug: string, seq: number, status: EntryStatus | null, previous_status: EntryStatus | null }

const EVENT_OF: Record<Op, string> = { create: 'content.created', put: 'content.updated', patch: 'content.updated', delete: 'content.deleted' }

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T

interface Write { slug: string, op: Op, status: EntryStatus | null, data: Data | null, body?: object }

/** The next write of a client over its own entries: a create, or a change of one it holds. */
function nextWrite (live: Map<string, Held>, newSlug: () => string, n: number): Write {
  const status: EntryStatus = Math.random() < 0.5 ? 'draft' : 'published'
  const slugs = [...live.keys()]
  // A long text, so that a torn write would show.
  const fields = (title: string): Data => ({ title: `${title}-${n}-${'x'.repeat(Math.floor(Math.random() * 2000))}`, n, ref: pick(TARGETS) })
  if (slugs.length === 0 || Math.random() < 0.3) {
    const slug = newSlug()
    const data = fields('new')
    return { slug, op: 'create', status, data, body: { _slug: slug, _status: status, ...data } }
  }
  const slug = pick(slugs)
  const held = live.get(slug) as Held
  const roll = Math.random()
  if (roll < 0.35) {
    const data = fields('put')
    return { slug, op: 'put', status, data, body: { _status: status, ...data } }
  }
  // A PATCH flips the status (a publish or an unpublish), or edits fields and keeps it.
  if (roll < 0.8) {
    if (Math.random() < 0.5) return { slug, op: 'patch', status, data: held.data, body: { _status: status } }
    const change = Math.random() < 0.5 ? { n } : { ref: pick(TARGETS) }
    return { slug, op: 'patch', status: held.status, data: { ...held.data, ...change }, body: change }
  }
  return { slug, op: 'delete', status: null, data: null }
}

/** One client: writes to its own entries, one request at a time, until the server is gone. */
async function client (base: string, name: string, log: Sent[], failures: string[], acked: () => void): Promise<void> {
  const live = new Map<string, Held>()
  let n = 0
  for (;;) {
    const w = nextWrite(live, () => `${name}-${n}`, n++)
    const sent: Sent = { slug: w.slug, op: w.op, status: w.status, previous: live.get(w.slug)?.status ?? null, data: w.data, sentAt: performance.now(), ackedAt: null }
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
    if (w.status === null || w.data === null) live.delete(w.slug)
    else live.set(w.slug, { status: w.status, data: w.data })
    acked()
  }
}

/**
 * A server started and answering /health. A start loads every TypeScript source through the test
 * loader, which on a very busy machine can outlast Fastify's plugin timeout (10 s): a start that
 * failed for that reason alone is made again (three tries). The two stores' servers start at the
 * same time: a start is CPU work, and when this file runs last it has both cores.
 */
async function startHealthy (t: Test, env: Env, what: string): Promise<{ server: ServerProcess, port: number }> {
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
}

/** The server's settings: webhooks to a URL never reachable and not retried for an hour, so each payload stays in the outbox for the test to read. */
/** The database of each data dir, for postgres (helper.ts storeEnv): set once per store below. */
const databases = new Map<string, Env>()

function serverEnv (store: StoreName, dataDir: string, hook: string): Env {
  return {
    CMS_STORE: store,
    ...databases.get(dataDir),
    CMS_DATA_DIR: dataDir,
    CMS_HOST: '127.0.0.1',
    CMS_SEED: 'false',
    CMS_LOG_LEVEL: 'warn',
    // Never reachable, and not retried for an hour: each payload stays in the outbox for the test to read.
    CMS_WEBHOOKS: hook,
    CMS_WEBHOOK_BACKOFF_MS: '3600000'
  }
}

async function post (base: string, url: string, body: object): Promise<number> {
  const res = await fetch(`${base}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  await res.arrayBuffer()
  return res.status
}

/** The schemas and the entries the writes reference. */
async function prepare (t: Test, store: StoreName, base: string): Promise<void> {
  t.equal(await post(base, '/api/schemas', { name: TARGET_COLLECTION, fields: { title: { field_type: 'string' } } }), 201, `${store}: the target schema`)
  t.equal(await post(base, '/api/schemas', {
    name: COLLECTION,
    fields: { title: { field_type: 'string' }, n: { field_type: 'integer' }, ref: { field_type: 'reference', collection: TARGET_COLLECTION } }
  }), 201, `${store}: the schema`)
  for (const slug of TARGETS) t.equal(await post(base, `/api/content/${TARGET_COLLECTION}`, { _slug: slug, title: slug }), 201)
}

/**
 * Starts the server on the data dir; checks the last crash's aftermath (`after`); then writes
 * from every client until `acks` writes are acknowledged, and kills it.
 */
async function crashCycle (t: Test, store: StoreName, dataDir: string, hook: string, cycle: number, acks: number, after: Reopened | null): Promise<{ sent: Sent[], output: string }> {
  const { server, port } = await startHealthy(t, serverEnv(store, dataDir, hook), `${store}, cycle ${cycle}`)
  const base = `http://127.0.0.1:${port}`
  if (after === null) await prepare(t, store, base)
  else await checkRestart(t, base, dataDir, after, `${store}, start of cycle ${cycle}`)
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

/** Every content payload recorded in the outbox: the data dir's file, or PostgreSQL's table. */
async function outboxPayloads (dataDir: string): Promise<Payload[]> {
  const url = databases.get(dataDir)?.CMS_DATABASE_URL
  if (url !== undefined) {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return (await client.query<{ body: string }>("SELECT body FROM webhook_deliveries WHERE event LIKE 'content.%'")).rows.map(r => JSON.parse(r.body) as Payload)
    } finally {
      await client.end()
    }
  }
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
  /** Every entry of the collection written, by slug. */
  entries: Map<string, Held>
  latest: number
}

/** The data dir opened again, as the server opens its store. */
async function reopen (store: StoreName, dataDir: string): Promise<Reopened> {
  const opened = createStore(store, { dataDir, databaseUrl: databases.get(dataDir)?.CMS_DATABASE_URL })
  await opened.open()
  try {
    const records: ChangeRecord[] = []
    for (let after = 0; ;) {
      const page = await opened.changes.since(after, 1000, SCOPE)
      records.push(...page.records)
      after = page.upTo
      if (!page.more) break
    }
    const entries = new Map<string, Held>()
    for await (const { collection, entry } of opened.entries()) {
      if (collection === COLLECTION) entries.set(entry.slug, { status: entry.status, data: entry.data })
    }
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
function recordProblems (writes: readonly Sent[], seqOf: ReadonlyMap<Sent, number>, record: ChangeRecord | undefined, entry: Held | undefined): string[] {
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
  out.push(...dataProblems(candidates, entry))
  if (recorded(record) !== (entry === undefined ? 'delete:null' : `upsert:${entry.status}`)) out.push(`${slug}: the log says ${recorded(record)}, the entry is ${entry ?? 'absent'}`)
  return out
}

/** The same data whatever the order of its fields. */
function sameData (a: Data, b: Data): boolean {
  const keys = Object.keys(a).sort()
  return JSON.stringify(keys) === JSON.stringify(Object.keys(b).sort()) && keys.every(k => a[k] === b[k])
}

/** The entry is what one of the candidate writes made it, whole. */
function dataProblems (candidates: readonly Sent[], entry: Held | undefined): string[] {
  const slug = (candidates[0] as Sent).slug
  const made = (w: Sent): boolean => w.data === null ? entry === undefined : entry !== undefined && entry.status === w.status && sameData(entry.data, w.data)
  return candidates.some(made) ? [] : [`${slug}: the entry is ${JSON.stringify(entry)?.slice(0, 200) ?? 'absent'}, which no write it could be made`]
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

/**
 * What a start made of the crash before it (`state`: the data dir as reopened after the kill; the
 * start changes no content): the reverse index lists exactly the entries that reference each
 * target, and the latest event of every entry ever written says what it is, with its record's seq.
 */
async function checkRestart (t: Test, base: string, dataDir: string, state: Reopened, what: string): Promise<void> {
  for (const target of TARGETS) {
    const res = await fetch(`${base}/api/content/${TARGET_COLLECTION}/${target}/referrers`)
    const listed = (await res.json() as Array<{ collection: string, slug: string }>).filter(r => r.collection === COLLECTION).map(r => r.slug).sort()
    const want = [...state.entries].filter(([, e]) => e.data.ref === target).map(([slug]) => slug).sort()
    t.strictSame(listed, want, `${what}: the referrers of ${target} are the entries that reference it`)
  }
  const latest = new Map<string, Payload>()
  for (const p of await outboxPayloads(dataDir)) {
    if (p.collection === COLLECTION && p.seq > (latest.get(p.slug)?.seq ?? 0)) latest.set(p.slug, p)
  }
  const records = new Map(state.records.filter(r => r.collection === COLLECTION).map(r => [r.slug, r]))
  const out: string[] = []
  for (const slug of new Set([...latest.keys(), ...records.keys(), ...state.entries.keys()])) {
    const [event, entry, record] = [latest.get(slug), state.entries.get(slug), records.get(slug)]
    const says = event === undefined ? 'nothing' : `${event.event}:${String(event.status)}@${event.seq}`
    const is = entry === undefined ? (record === undefined ? 'nothing' : `content.deleted:null@${record.seq}`) : `${entry.status}@${record?.seq ?? '?'}`
    const agrees = entry === undefined
      ? (record === undefined ? event === undefined || event.event === 'content.deleted' : says === is)
      : event !== undefined && event.event !== 'content.deleted' && event.status === entry.status && event.seq === record?.seq
    if (!agrees) out.push(`${slug}: the outbox's latest event is ${says}, the entry ${is}`)
  }
  t.strictSame(out, [], `${what}: the outbox's latest event of each entry says what it is`)
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

// A start takes up to 30 s on a loaded machine: a minute per cycle of both stores.
t.setTimeout(Math.max(120_000, (CYCLES + 1) * 60_000))

t.test('every acknowledged write survives kill -9 of the server, in the log and in order, on both stores', async t => {
  const hook = await closedPortUrl()
  await Promise.all(STORES.map(async store => {
    const dataDir = path.join(tempDir(t), 'data')
    databases.set(dataDir, await storeEnv(t, store, dataDir))
    let before = 0
    let state: Reopened | null = null
    const sent: Sent[] = []
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const wanted = 20 + Math.floor(Math.random() * 200)
      const what = `${store}, cycle ${cycle} (killed after ${wanted} acknowledged writes)`
      const run = await crashCycle(t, store, dataDir, hook, cycle, wanted, state)
      sent.push(...run.sent)
      t.ok(run.sent.filter(w => w.ackedAt !== null).length >= wanted, `${what}: the clients were writing`)
      const log = await reopen(store, dataDir)
      state = log
      const slugs = new Set(run.sent.map(w => w.slug))
      const payloads = (await outboxPayloads(dataDir)).filter(p => slugs.has(p.slug))
      t.strictSame(problems(run.sent, payloads, log, before), [], `${what}: every acknowledged write is in the log, in order`, { output: run.output.slice(-2000) })
      t.strictSame(log.records.map(r => r.seq), [...new Set(log.records.map(r => r.seq))].sort((a, b) => a - b), `${what}: the log reads in seq order, once each`)
      before = log.latest
    }
    t.ok(sent.some(w => w.op === 'patch' && w.previous === 'published' && w.status === 'draft' && w.ackedAt !== null), `${store}: unpublishes were among the writes`)
    // A last start checks the last crash, and stops cleanly.
    const { server, port } = await startHealthy(t, serverEnv(store, dataDir, hook), `${store}, after the last cycle`)
    if (state !== null) await checkRestart(t, `http://127.0.0.1:${port}`, dataDir, state, `${store}, after the last cycle`)
    server.child.kill('SIGTERM')
    t.equal(await server.exited, 0, `${store}: a clean stop after the crashes`)
  }))
})
