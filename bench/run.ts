// `npm run bench`: measures Lectern against a bare-Fastify baseline in the same run.
// Every server runs in its own child process; autocannon drives them from this process.
// Prints a table and writes bench/results.json. Options: --entries N (default 10000),
// --list-entries N (SQLite list rows, default 100000), --file-list-entries N (default 10000),
// --duration S (default 3), --warmup S (default 2; an unmeasured run before the measured ones,
// for Lectern and the baseline alike), --rounds N (default 5; Lectern and the baseline are
// measured back to back, N times each, in alternating order, and a row's ratio is the median of
// the N per-round ratios), --connections N (default 50),
// --no-pin (by default, with two or more cores and `taskset`, every server runs on core 0 and
// this process, which drives the load, on core 1, so client and server never share a core),
// --postgres-entries N (the PostgreSQL rows' collection, default 100000),
// --only create,get,list,resolve,versions,pull,sync,export,transform,admin,postgres, --stores sqlite,file (`--only pull` runs the
// full pull alone, `--only versions` the cost of keeping versions (issue 26), `--only sync` the sync and keyset rows alone, `--only export` the timed
// `lectern export`, with --data-dir and with --server: each creates the SQLite collection's --list-entries itself when no
// earlier phase did; `--only postgres` the PostgreSQL rows, on an embedded server of their own),
// --rows <regular expression> (only the rows whose name it matches; the phases still set up their data),
// --cpu-prof DIR (every Lectern server writes a V8 CPU profile there when it stops: node --cpu-prof),
// --postgres-explain FILE (the postgres phase's database logs there the plan of every statement of 20 ms or more).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http, { type IncomingHttpHeaders } from 'node:http'
import { readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import autocannon, { type Request as CannonRequest, type Result } from 'autocannon'
import { chromium } from 'playwright-core'
import sharp from 'sharp'
import { CHROMIUM, CHROMIUM_ARGS, firstRowMs, gzippedJavaScriptBytes, navigationMs } from './admin-page.js'
import { startPostgres, type BenchPostgres } from './postgres.js'

const { values: opts } = parseArgs({
  options: {
    entries: { type: 'string', default: '10000' },
    'list-entries': { type: 'string', default: '100000' },
    'file-list-entries': { type: 'string', default: '10000' },
    'postgres-entries': { type: 'string', default: '100000' },
    duration: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    'no-pin': { type: 'boolean', default: false },
    connections: { type: 'string', default: '50' },
    only: { type: 'string', default: 'create,get,list,resolve,versions,pull,sync,export,transform,admin,postgres' },
    stores: { type: 'string', default: 'sqlite,file' },
    rows: { type: 'string', default: '' },
    'cpu-prof': { type: 'string', default: '' },
    'postgres-explain': { type: 'string', default: '' }
  }
})
const ENTRIES = Number(opts.entries)
const LIST_ENTRIES = { sqlite: Number(opts['list-entries']), file: Number(opts['file-list-entries']), postgres: Number(opts['postgres-entries']) }
const DURATION = Number(opts.duration)
const WARMUP = Number(opts.warmup)
const ROUNDS = Math.max(1, Number(opts.rounds))
const CONNECTIONS = Number(opts.connections)
const ONLY = new Set(opts.only.split(','))
const ALL_STORES = ['sqlite', 'file'] as const
type Store = (typeof ALL_STORES)[number]
/** A store a server runs on: PostgreSQL's rows are a phase of their own (`--only postgres`), not one of --stores. */
type ServerStore = Store | 'postgres'
const requestedStores = opts.stores.split(',')
const STORES = ALL_STORES.filter(store => requestedStores.includes(store))
if (STORES.length === 0 || STORES.length !== requestedStores.length) throw new Error(`--stores takes ${ALL_STORES.join(',')}; got '${opts.stores}'`)

const ROW_FILTER = new RegExp(opts.rows)
/** Whether a row is measured: --rows matches its name (an empty --rows matches every row). */
const wanted = (name: string): boolean => ROW_FILTER.test(name)
/** Node flags of Lectern's servers: a CPU profile each, written when it stops, with --cpu-prof. */
const LECTERN_NODE_ARGS = opts['cpu-prof'] === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(opts['cpu-prof'])}`]

const here = import.meta.dirname
const serverJs = path.resolve(here, '..', 'server.js')
const baselineJs = path.resolve(here, 'baseline.js')
const resultsFile = path.resolve(here, '..', '..', 'bench', 'results.json')
const adminDist = path.resolve(here, '..', '..', 'admin', 'dist')
const scratch = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-'))

interface Measure { reqPerSec: number, p50: number, p99: number, bytes: number, errors: number }
/**
 * One round of a row: both servers' req/s, measured back to back, their ratio, the share of its
 * core the load generator used while driving each (near 1, the client was the limit), and each
 * server's CPU time (user + system, all threads) per request in µs (null off Linux).
 */
interface Round {
  lectern: number
  baseline: number
  ratio: number
  client_cpu: { lectern: number, baseline: number }
  server_cpu_us: { lectern: number | null, baseline: number | null }
  /** On PostgreSQL, its processes' CPU time per request of Lectern's run, besides Lectern's own (approximate: see groupCpuUs). */
  database_cpu_us?: number | null
}
interface Row {
  name: string
  store: ServerStore | '-'
  lectern: Measure
  baseline: Measure | null
  /**
   * Lectern's req/s as a share of the baseline's for the same requests and body: the median of the rounds'
   * ratios when the row was measured in rounds (see measurePair).
   */
  ratio: number | null
  /** Each round's figures, when the row was measured in rounds against a baseline. */
  rounds?: Round[]
  /**
   * When the verdict pairs the row with another request on Lectern (the rounds' `baseline` side):
   * that request, each of those rounds, and their CPU ratio (as cpu_ratio).
   */
  paired?: { against: string, rounds: Round[], cpu_ratio: number | null }
  /**
   * The baseline's CPU time per request as a share of Lectern's (median of the rounds): what a
   * request costs, independent of which side the load generator held back. Not a target.
   */
  cpu_ratio?: number | null
  target: string
  pass: boolean | null
  note?: string
}
const rows: Row[] = []
const extra: Record<string, unknown> = {}

// ---------- processes ----------

/** Sets the CPU affinity of every thread of `pid` (threads made later inherit it); false when it cannot. */
function pin (pid: number, cpu: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const PINNED = !(opts['no-pin'] ?? false) && os.cpus().length >= 2 && pin(process.pid, 1)
/** Servers run on core 0 when this process (the load) runs on core 1. */
function pinServer (child: ChildProcess): void {
  if (PINNED && child.pid !== undefined) pin(child.pid, 0)
}
/**
 * Lectern's ports are taken below the kernel's ephemeral range: the load opens thousands of
 * client sockets, and one of them could otherwise hold the port a server is about to listen on.
 * (The baselines listen on a port the kernel picks and report it.)
 */
function firstPort (): number {
  let low = 32768
  try { low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) } catch {}
  const base = Number.isInteger(low) && low > 12000 ? low - 10000 : 39100
  return base + Math.floor(Math.random() * 4000)
}
let nextPort = firstPort()

interface Running {
  url: string
  child: ChildProcess
  stop: () => Promise<void>
  /** On PostgreSQL, the database's processes (for their CPU time). */
  database?: () => number[]
}

async function waitHealthy (url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try { if ((await fetch(`${url}/health`)).ok) return } catch {}
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error('server did not become healthy')
}

async function stopChild (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/**
 * Servers run as `npm start` and the container run Lectern: a plain `node` process with no IPC
 * channel. A forked child has one, and Node starts differently with it: in Lectern that left
 * `process.nextTick` on V8's slow generic path (about 7% of a small request's time), which the
 * benchmark would then charge to Lectern.
 */
function startNode (script: string, args: string[], env: NodeJS.ProcessEnv, stdout: 'inherit' | 'pipe', nodeArgs: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, script, ...args], { env, stdio: ['ignore', stdout, 'inherit'] })
}

/** The PostgreSQL phase's database while it runs (bench/postgres.ts). */
let postgres: BenchPostgres | null = null

async function startLectern (store: ServerStore, dataDir: string, env: Record<string, string> = {}): Promise<Running> {
  if (store === 'postgres' && postgres === null) throw new Error('no PostgreSQL server: the postgres phase starts one')
  const port = nextPort++
  const child = startNode(serverJs, [], {
    PATH: process.env.PATH ?? '',
    CMS_PORT: String(port),
    CMS_HOST: '127.0.0.1',
    CMS_DATA_DIR: dataDir,
    CMS_STORE: store,
    CMS_SEED: 'false',
    CMS_LOG_LEVEL: 'warn',
    CMS_BODY_LIMIT: '10485760',
    ...(store === 'postgres' ? { CMS_DATABASE_URL: postgres?.url ?? '' } : {}),
    ...env
  }, 'inherit', LECTERN_NODE_ARGS)
  pinServer(child)
  const url = `http://127.0.0.1:${port}`
  await waitHealthy(url, child)
  return { url, child, stop: async () => { await stopChild(child) }, ...(store === 'postgres' ? { database: postgres?.pids } : {}) }
}

let baselines = 0
/** A bare Fastify answering every GET with `body` and `headers` (bench/baseline.ts). */
async function startBaseline (body: Buffer, headers: Record<string, string>): Promise<Running> {
  const file = path.join(scratch, `baseline-${baselines++}.bin`)
  writeFileSync(file, body)
  const child = startNode(baselineJs, [file, '0', JSON.stringify(headers)], { PATH: process.env.PATH ?? '' }, 'pipe')
  pinServer(child)
  // The baseline prints the port it listens on as its first line.
  const port = await new Promise<number>((resolve, reject) => {
    let out = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const line = out.split('\n', 2)
      if (line.length === 2) resolve((JSON.parse(line[0] ?? '') as { port: number }).port)
    })
    child.once('exit', code => { reject(new Error(`baseline exited with ${code}`)) })
  })
  return { url: `http://127.0.0.1:${port}`, child, stop: async () => { await stopChild(child) } }
}

function rssMb (child: ChildProcess): number | null {
  try {
    const status = readFileSync(`/proc/${String(child.pid)}/status`, 'utf8')
    const m = /VmRSS:\s+(\d+) kB/.exec(status)
    return m?.[1] === undefined ? null : Math.round(Number(m[1]) / 1024)
  } catch { return null }
}

/** The most RSS `child` reaches from now until `stop()` is called, read every 10 ms. */
function watchRss (child: ChildProcess): { stop: () => number | null } {
  let peak: number | null = null
  const read = (): void => {
    const mb = rssMb(child)
    if (mb !== null && (peak === null || mb > peak)) peak = mb
  }
  read()
  const timer = setInterval(read, 10)
  return { stop: () => { clearInterval(timer); read(); return peak } }
}

// ---------- measuring ----------
function toMeasure (r: Result): Measure {
  return {
    reqPerSec: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    bytes: Math.round(r.throughput.average / Math.max(1, r.requests.average)),
    errors: r.errors + r.timeouts + r.non2xx
  }
}

/** What one run sends: one request, or several that each connection sends in turn. */
type Load = CannonRequest | CannonRequest[]

async function cannon (url: string, request: Load, extraOpts: { amount?: number, duration?: number } = {}): Promise<Result> {
  return await autocannon({
    url,
    connections: CONNECTIONS,
    ...(extraOpts.amount === undefined ? { duration: extraOpts.duration ?? DURATION } : { amount: extraOpts.amount }),
    requests: Array.isArray(request) ? request : [request],
    timeout: 30
  })
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] as number : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** The median req/s and p50 of the rounds, the worst p99, every error. */
function combine (measures: Measure[]): Measure {
  return {
    reqPerSec: Math.round(median(measures.map(m => m.reqPerSec))),
    p50: median(measures.map(m => m.p50)),
    p99: Math.max(...measures.map(m => m.p99)),
    bytes: Math.round(median(measures.map(m => m.bytes))),
    errors: measures.reduce((sum, m) => sum + m.errors, 0)
  }
}

/** Clock ticks per second of /proc/<pid>/stat's CPU times. */
const CLOCK_TICKS = ((): number => {
  try { return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100 } catch { return 100 }
})()

/** A process's CPU time so far (user + system, every thread) in µs, or null where /proc has none. */
function processCpuUs (pid: number | undefined): number | null {
  if (pid === undefined) return null
  try {
    // The fields after the command name, which is in parentheses and may hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    return (Number(fields[11]) + Number(fields[12])) * 1e6 / CLOCK_TICKS
  } catch { return null }
}

/**
 * The CPU time so far of a group of processes (a database's), in µs; null for none. A process
 * gone meanwhile counts 0, so across a run this misses the processes that end or start during it
 * (a pool's connections stay for the run: their backends are counted).
 */
function groupCpuUs (pids: number[]): number | null {
  return pids.length === 0 ? null : pids.reduce((sum, pid) => sum + (processCpuUs(pid) ?? 0), 0)
}

/** `after - before` per request, in µs to one decimal; null when either is unknown or nothing was answered. */
function perRequestUs (before: number | null, after: number | null, requests: number): number | null {
  return before === null || after === null || requests === 0 ? null : Math.round((after - before) / requests * 10) / 10
}

/** A server under load: where to send requests, and its process (for its CPU time), and its database's processes when it has one. */
interface Target { url: string, pid: number | undefined, database?: (() => number[]) | undefined }
interface Timed { measure: Measure, clientCpu: number, serverCpuUs: number | null, databaseCpuUs: number | null }

/**
 * One measured run, with the share of its core this process (the load generator) used meanwhile
 * and the server's CPU time per request.
 */
async function timedRun (target: Target, request: Load): Promise<Timed> {
  const cpu = process.cpuUsage()
  const server0 = processCpuUs(target.pid)
  const database = target.database?.() ?? []
  const database0 = groupCpuUs(database)
  const start = performance.now()
  const result = await cannon(target.url, request)
  const used = process.cpuUsage(cpu)
  const server1 = processCpuUs(target.pid)
  const database1 = groupCpuUs(database)
  const clientCpu = (used.user + used.system) / 1000 / Math.max(1, performance.now() - start)
  const requests = result.requests.total
  return {
    measure: toMeasure(result),
    clientCpu: Math.round(clientCpu * 100) / 100,
    serverCpuUs: perRequestUs(server0, server1, requests),
    databaseCpuUs: perRequestUs(database0, database1, requests)
  }
}

/**
 * Lectern and the baseline measured back to back, ROUNDS times each, after an unmeasured
 * warm-up of each (the JIT has compiled the hot path, caches are filled). Each round is a pair:
 * Lectern first in even rounds, the baseline first in odd ones, so a machine that drifts over
 * the row weighs on both sides alike. The ratio is the median of the rounds' ratios: a slow
 * spell of the machine lands on one or two runs, and a pair shares whatever state the machine
 * was in, so one side's bad round does not stand against the other side's good one. The
 * baseline side is sent `baselineRequest` (by default the same request); the `_resolve` row
 * pairs Lectern with itself, on another request.
 */
async function measurePair (
  lecternServer: Target, request: Load, baselineServer: Target, baselineRequest: Load = request, roundCount = ROUNDS
): Promise<{ lectern: Measure, baseline: Measure, ratio: number, cpuRatio: number | null, rounds: Round[] }> {
  if (WARMUP > 0) {
    await cannon(lecternServer.url, request, { duration: WARMUP })
    await cannon(baselineServer.url, baselineRequest, { duration: WARMUP })
  }
  const lectern: Measure[] = []
  const baseline: Measure[] = []
  const rounds: Round[] = []
  for (let round = 0; round < roundCount; round++) {
    let l, b
    if (round % 2 === 0) {
      l = await timedRun(lecternServer, request)
      b = await timedRun(baselineServer, baselineRequest)
    } else {
      b = await timedRun(baselineServer, baselineRequest)
      l = await timedRun(lecternServer, request)
    }
    lectern.push(l.measure)
    baseline.push(b.measure)
    rounds.push({
      lectern: l.measure.reqPerSec,
      baseline: b.measure.reqPerSec,
      ratio: Math.round(l.measure.reqPerSec / Math.max(1, b.measure.reqPerSec) * 1000) / 1000,
      client_cpu: { lectern: l.clientCpu, baseline: b.clientCpu },
      server_cpu_us: { lectern: l.serverCpuUs, baseline: b.serverCpuUs },
      ...(lecternServer.database === undefined ? {} : { database_cpu_us: l.databaseCpuUs })
    })
  }
  const cpuRatios = rounds.flatMap(r => r.server_cpu_us.lectern !== null && r.server_cpu_us.baseline !== null && r.server_cpu_us.lectern > 0
    ? [r.server_cpu_us.baseline / r.server_cpu_us.lectern]
    : [])
  const cpuRatio = cpuRatios.length === rounds.length ? Math.round(median(cpuRatios) * 1000) / 1000 : null
  return { lectern: combine(lectern), baseline: combine(baseline), ratio: median(rounds.map(r => r.ratio)), cpuRatio, rounds }
}

/** Where a request's server-side CPU went, Lectern's process and its database's (medians of the rounds, µs per request). */
function cpuNote (lectern: Array<number | null>, database: Array<number | null>): string {
  const known = (values: Array<number | null>): number[] => values.filter((v): v is number => v !== null)
  const at = (values: Array<number | null>): string => known(values).length === 0 ? '?' : String(Math.round(median(known(values))))
  return `CPU per request: Lectern ${at(lectern)} µs, PostgreSQL ${at(database)} µs`
}

/** The headers that describe a body (what it is, how it is encoded), which the baseline sends too. */
const BODY_HEADERS = ['content-type', 'content-encoding', 'vary']

/**
 * One request as autocannon sends it: the status, headers and body as they came over the wire
 * (fetch would decode a compressed body).
 */
async function probe (url: string, headers: Record<string, string>): Promise<{ status: number, headers: IncomingHttpHeaders, body: Buffer }> {
  return await new Promise((resolve, reject) => {
    http.get(url, { headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => { chunks.push(chunk) })
      res.once('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }) })
      res.once('error', reject)
    }).once('error', reject)
  })
}

/**
 * A row: Lectern against a bare Fastify that answers the bytes and body headers Lectern answered
 * (probed once), both sent `request` with `headers`. Null when --rows leaves the row out.
 */
async function compare (
  name: string, store: ServerStore | '-', server: Running, request: CannonRequest,
  target: { ratio?: number, p99?: number, text: string, none?: true }, headers: Record<string, string> = {}
): Promise<Row | null> {
  if (!wanted(name)) return null
  // A request built per call (setupRequest) is probed with one instance of it.
  const probePath = (request.setupRequest?.({ ...request }, {}) ?? request).path ?? '/'
  const probed = await probe(server.url + probePath, headers)
  if (probed.status !== 200) throw new Error(`${name}: ${probed.status} ${probed.body.toString().slice(0, 200)}`)
  const bodyHeaders = Object.fromEntries(BODY_HEADERS.flatMap(h => typeof probed.headers[h] === 'string' ? [[h, probed.headers[h]]] : []))
  const base = await startBaseline(probed.body, bodyHeaders)
  let measured
  try {
    // The baseline is sent the very same requests (path, query, headers): the ratio leaves out
    // what HTTP and Fastify spend reading them, on both sides.
    measured = await measurePair(
      { url: server.url, pid: server.child.pid, database: server.database },
      { ...request, headers: { ...headers, ...request.headers } },
      { url: base.url, pid: base.child.pid })
  } finally {
    await base.stop()
  }
  const { lectern, baseline, ratio, cpuRatio, rounds } = measured
  let pass = lectern.errors === 0
  if (target.ratio !== undefined) pass &&= ratio >= target.ratio
  if (target.p99 !== undefined) pass &&= lectern.p99 <= target.p99
  // A row with no target gets no verdict (its errors are in results.json).
  const row: Row = { name, store, lectern, baseline, ratio, cpu_ratio: cpuRatio, rounds, target: target.text, pass: target.none === true ? null : pass }
  if (server.database !== undefined) row.note = cpuNote(rounds.map(r => r.server_cpu_us.lectern), rounds.map(r => r.database_cpu_us ?? null))
  rows.push(row)
  printRow(row)
  return row
}

function printRow (r: Row): void {
  const pct = r.ratio === null ? '' : `${(r.ratio * 100).toFixed(0)}%`
  const cpu = r.cpu_ratio === null || r.cpu_ratio === undefined ? '' : `${(r.cpu_ratio * 100).toFixed(0)}%`
  const base = r.baseline === null ? '' : `${r.baseline.reqPerSec}`
  const verdict = r.pass === null ? '' : r.pass ? 'PASS' : 'FAIL'
  console.log([
    r.name.padEnd(44), r.store.padEnd(6), String(r.lectern.reqPerSec).padStart(8), `${r.lectern.p50}`.padStart(6),
    `${r.lectern.p99}`.padStart(6), base.padStart(8), pct.padStart(5), cpu.padStart(5), r.target.padEnd(26), verdict, r.note ?? ''
  ].join(' | '))
}

function header (): void {
  console.log([
    'row'.padEnd(44), 'store'.padEnd(6), 'req/s'.padStart(8), 'p50ms'.padStart(6), 'p99ms'.padStart(6),
    'base/s'.padStart(8), '%'.padStart(5), 'cpu%'.padStart(5), 'target'.padEnd(26), 'verdict'
  ].join(' | '))
}

/**
 * The RSS target (300 MB) on the two readings of a store's list rows: after the uncached rows, in
 * the server that created the entries, and after the cached ones, in a server restarted on them.
 */
function rssVerdict (store: ServerStore, entries: number): void {
  const uncached = extra[`rss_mb_after_list_${store}`]
  const cached = extra[`rss_mb_after_cached_${store}`]
  const verdict = typeof uncached === 'number' && typeof cached === 'number' ? (Math.max(uncached, cached) <= 300 ? 'PASS' : 'FAIL') : 'unknown'
  extra[store === 'sqlite' ? 'rss_pass' : `rss_pass_${store}`] = verdict === 'PASS'
  console.log(`${store} server RSS after the ${entries}-entry run: ${String(uncached)} MB (uncached), ${String(cached)} MB (cached) — target <= 300 MB: ${verdict}`)
}

// ---------- fixtures ----------
const CATEGORIES = ['news', 'guides', 'releases', 'opinion', 'events']
const WORDS = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit', 'sed', 'tempor']

function entryBody (i: number, extraFields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    _slug: `entry-${i}`,
    title: `Entry ${i} ${WORDS[i % WORDS.length] ?? ''}`,
    body: `${WORDS[(i * 7) % WORDS.length] ?? ''} ${WORDS[(i * 3) % WORDS.length] ?? ''} number ${i}`,
    category: CATEGORIES[i % CATEGORIES.length],
    score: (i * 7919) % 1000,
    rank: i,
    published_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
    ...extraFields
  }
}

async function api (server: Running, method: string, url: string, body?: unknown): Promise<unknown> {
  const res = await fetch(server.url + url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`)
  return text === '' ? null : JSON.parse(text)
}

/** The collection of the entry, list and admin rows (entryBody's fields). */
const BENCH_POST = {
  name: 'bench_post',
  default_sort: 'published_at',
  fields: {
    title: { field_type: 'string', required: true },
    body: { field_type: 'text' },
    category: { field_type: 'select', options: CATEGORIES },
    score: { field_type: 'integer', min: 0 },
    rank: { field_type: 'integer', unique: true },
    published_at: { field_type: 'datetime' }
  }
}

async function createSchemas (server: Running): Promise<void> {
  await api(server, 'POST', '/api/schemas', BENCH_POST)
  await api(server, 'POST', '/api/schemas', {
    name: 'bench_author',
    fields: { name: { field_type: 'string', required: true }, bio: { field_type: 'text' } }
  })
  await api(server, 'POST', '/api/schemas', {
    name: 'bench_article',
    fields: {
      title: { field_type: 'string', required: true },
      author: { field_type: 'reference', collection: 'bench_author' },
      editor: { field_type: 'reference', collection: 'bench_author' },
      reviewer: { field_type: 'reference', collection: 'bench_author' }
    }
  })
}

/** Creates entries [from, to) over HTTP at full concurrency; returns the autocannon result. */
async function createEntries (server: Running, from: number, to: number): Promise<Result> {
  let i = from
  return await cannon(server.url, {
    method: 'POST',
    path: '/api/content/bench_post',
    headers: { 'content-type': 'application/json' },
    setupRequest: req => ({ ...req, body: JSON.stringify(entryBody(i++)) })
  }, { amount: to - from })
}

// ---------- phases ----------
async function entriesPhase (store: Store): Promise<void> {
  const dataDir = path.join(scratch, `data-${store}`)
  let server = await startLectern(store, dataDir, { CMS_CACHE_MAX: '0' })
  try {
    await createSchemas(server)
    const createRow = `create (${ENTRIES} entries, durable)`
    if (ONLY.has('create') && wanted(createRow)) {
      const result = await createEntries(server, 0, ENTRIES)
      const m = toMeasure(result)
      const target = store === 'sqlite' ? 2000 : 800
      const row: Row = {
        name: createRow,
        store,
        lectern: m,
        baseline: null,
        ratio: null,
        target: `>= ${target} creates/s`,
        pass: m.errors === 0 && m.reqPerSec >= target
      }
      rows.push(row)
      printRow(row)
    } else {
      await createEntries(server, 0, ENTRIES)
    }
    if (ONLY.has('get')) {
      await compare('single GET, cache off', store, server, {
        method: 'GET',
        setupRequest: req => ({ ...req, path: `/api/content/bench_post/entry-${Math.floor(Math.random() * ENTRIES)}` })
      }, { ratio: 0.4, text: '>= 40% of baseline' })
    }
    if (ONLY.has('list')) {
      const listEntries = LIST_ENTRIES[store]
      if (listEntries > ENTRIES) await createEntries(server, ENTRIES, listEntries)
      const queries: Array<[string, string]> = [
        ['filter + sort + page of 20', '/api/content/bench_post?category=news&score[gte]=100&_sort=-score&_per_page=20&_page=3'],
        ['page of 100', '/api/content/bench_post?_per_page=100&_page=7'],
        ['_q search, page of 20', '/api/content/bench_post?_q=tempor&_per_page=20']
      ]
      for (const [label, url] of queries) {
        await compare(`${label}, ${listEntries} entries, cache off`, store, server, { method: 'GET', path: url },
          { ratio: 0.2, p99: 50, text: '>= 20% of baseline, p99 <= 50ms' })
      }
      extra[`rss_mb_after_list_${store}`] = rssMb(server.child)
      await server.stop()
      server = await startLectern(store, dataDir)
      for (const [label, url] of queries) {
        await compare(`${label}, ${listEntries} entries, cache hit`, store, server, { method: 'GET', path: url },
          { ratio: 0.7, text: '>= 70% of baseline' })
      }
      // Contract §11: the compressed bytes kept with the cached answer, against a bare Fastify
      // sending those same bytes with the same headers.
      await compare(`page of 100, ${listEntries} entries, cache hit, gzip`, store, server, { method: 'GET', path: '/api/content/bench_post?_per_page=100&_page=7' },
        { ratio: 0.7, text: '>= 70% of baseline' }, { 'accept-encoding': 'gzip' })
      await compare('single GET, cache hit', store, server, { method: 'GET', path: '/api/content/bench_post/entry-42' },
        { ratio: 0.7, text: '>= 70% of baseline' })
      extra[`rss_mb_after_cached_${store}`] = rssMb(server.child)
      if (store === 'sqlite') rssVerdict(store, listEntries)
    }
    if (ONLY.has('resolve')) {
      await server.stop()
      server = await startLectern(store, dataDir, { CMS_CACHE_MAX: '0' })
      for (let a = 0; a < 50; a++) await api(server, 'POST', '/api/content/bench_author', { _slug: `author-${a}`, name: `Author ${a}`, bio: 'Writes things.' })
      for (let i = 0; i < 300; i++) {
        await api(server, 'POST', '/api/content/bench_article', {
          _slug: `article-${i}`, title: `Article ${i}`, author: `author-${i % 50}`, editor: `author-${(i + 1) % 50}`, reviewer: `author-${(i + 2) % 50}`
        })
      }
      const plainRequest: CannonRequest = { method: 'GET', path: '/api/content/bench_article?_per_page=100' }
      const resolvedRequest: CannonRequest = { method: 'GET', path: '/api/content/bench_article?_per_page=100&_resolve=1' }
      const plain = await compare('page of 100, 3 refs each, no _resolve', store, server, plainRequest, { text: 'reference for the next row' })
      const resolved = await compare('page of 100, 3 refs each, _resolve=1', store, server, resolvedRequest, { text: '>= 40% of the row above' })
      if (plain !== null && resolved !== null) {
        // The target divides Lectern by Lectern. The two rows above ran a minute apart, each paired
        // with its baseline; the verdict pairs the two requests with each other the same way
        // (alternating rounds, the median of the rounds' ratios), so a slow spell of the machine
        // weighs on both sides alike.
        const target = { url: server.url, pid: server.child.pid }
        const paired = await measurePair(target, resolvedRequest, target, plainRequest)
        const apart = resolved.lectern.reqPerSec / Math.max(1, plain.lectern.reqPerSec)
        resolved.ratio = paired.ratio
        resolved.pass = resolved.lectern.errors === 0 && paired.lectern.errors === 0 && paired.baseline.errors === 0 && paired.ratio >= 0.4
        resolved.note = `${(paired.ratio * 100).toFixed(0)}% of the unresolved page in paired rounds ` +
          `(${paired.lectern.reqPerSec} against ${paired.baseline.reqPerSec} req/s; the two rows' medians: ${(apart * 100).toFixed(0)}%)`
        resolved.paired = { against: plainRequest.path ?? '', rounds: paired.rounds, cpu_ratio: paired.cpuRatio }
        console.log(`  -> _resolve=1 page at ${resolved.note}: ${resolved.pass ? 'PASS' : 'FAIL'} (the row above printed its verdict before this ratio was known)`)
      }
    }
  } finally {
    await server.stop()
  }
}

/** Writes per round of the versions phase, per server and kind (create, then update of the same entries). */
const VERSION_WRITES = 2000
const VERSION_ROUNDS = 4

/** One batch of writes over HTTP at full concurrency, and the server's CPU time per write (µs). */
async function timedWrites (server: Running, requests: (i: number) => CannonRequest, count: number): Promise<{ measure: Measure, cpuUs: number | null }> {
  let i = 0
  const before = processCpuUs(server.child.pid)
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    amount: count,
    timeout: 30,
    requests: [{ setupRequest: req => ({ ...req, ...requests(i++) }) }]
  })
  // A batch lasts a few seconds: its rate from the whole run, not from autocannon's per-second samples.
  const measure = { ...toMeasure(result), reqPerSec: Math.round(result.requests.total / Math.max(0.001, result.duration)) }
  return { measure, cpuUs: perRequestUs(before, processCpuUs(server.child.pid), result.requests.total) }
}

/**
 * Issue 26: a write that keeps a version (CMS_REVISIONS at its default, 50) costs at most 25% more
 * than one that keeps none (CMS_REVISIONS=0). Two servers of the store, one per setting, cache
 * off, take turns (VERSION_ROUNDS rounds, the order alternating): each round creates
 * VERSION_WRITES new entries, then updates them (PUT). The verdict compares what the create and
 * update rows measure, durable writes per second (medians of the rounds): with versions at least
 * 80% of without, i.e. at most 25% more time per write. The server's CPU time per write (every
 * thread: the file store's writers too) is printed beside it.
 */
async function versionsPhase (store: Store): Promise<void> {
  const servers: Array<[label: string, server: Running]> = []
  try {
    for (const [label, revisions] of [['CMS_REVISIONS=0', '0'], ['CMS_REVISIONS=50', '50']] as const) {
      const server = await startLectern(store, path.join(scratch, `data-versions-${store}-${revisions}`), { CMS_CACHE_MAX: '0', CMS_REVISIONS: revisions })
      servers.push([label, server])
      await createSchemas(server)
    }
    const cpu = new Map<string, number[]>()
    const throughput = new Map<string, number[]>()
    const last = new Map<string, Measure>()
    for (let round = 0; round < VERSION_ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse()
      for (const [label, server] of order) {
        const from = round * VERSION_WRITES
        const create = await timedWrites(server, i => ({ method: 'POST', path: '/api/content/bench_post', headers: { 'content-type': 'application/json' }, body: JSON.stringify(entryBody(from + i)) }), VERSION_WRITES)
        const update = await timedWrites(server, i => ({
          method: 'PUT', path: `/api/content/bench_post/entry-${from + i}`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(entryBody(from + i, { title: `Updated ${from + i}` }))
        }), VERSION_WRITES)
        for (const [kind, run] of [['create', create], ['update', update]] as const) {
          if (run.measure.errors > 0) throw new Error(`${kind} with ${label}: ${run.measure.errors} errors`)
          const key = `${kind}\u0000${label}`
          if (run.cpuUs !== null) cpu.set(key, [...(cpu.get(key) ?? []), run.cpuUs])
          throughput.set(key, [...(throughput.get(key) ?? []), run.measure.reqPerSec])
          last.set(key, run.measure)
        }
      }
    }
    for (const kind of ['create', 'update'] as const) {
      const rates = (label: string): number[] => (throughput.get(`${kind}\u0000${label}`) ?? [])
      const rate = median(rates('CMS_REVISIONS=50')) / Math.max(1, median(rates('CMS_REVISIONS=0')))
      const without = cpu.get(`${kind}\u0000CMS_REVISIONS=0`) ?? []
      const withVersions = cpu.get(`${kind}\u0000CMS_REVISIONS=50`) ?? []
      const cpuNote = without.length > 0 && withVersions.length > 0
        ? `server CPU per write ${Math.round(median(withVersions))} µs against ${Math.round(median(without))} µs (${(median(withVersions) / median(without) * 100).toFixed(0)}%)`
        : 'no CPU times on this system'
      const row: Row = {
        name: `${kind}, keeping versions (CMS_REVISIONS=50)`,
        store,
        lectern: { ...(last.get(`${kind}\u0000CMS_REVISIONS=50`) as Measure), reqPerSec: Math.round(median(rates('CMS_REVISIONS=50'))) },
        baseline: { ...(last.get(`${kind}\u0000CMS_REVISIONS=0`) as Measure), reqPerSec: Math.round(median(rates('CMS_REVISIONS=0'))) },
        ratio: rate,
        target: '>= 80% of CMS_REVISIONS=0',
        // At most 25% more per write: the row's writes per second at least 1/1.25 of the same writes keeping no version.
        pass: rate >= 0.8,
        note: `base/s: the same writes with CMS_REVISIONS=0; medians of ${VERSION_ROUNDS} alternating rounds of ${VERSION_WRITES}; ${cpuNote}`
      }
      rows.push(row)
      printRow(row)
    }
  } finally {
    for (const [, server] of servers) await server.stop()
  }
}

/** One pass of a full pull: every page of 1000, one after another, as a static-site build reads them. */
async function pullPages (server: Running, query: string): Promise<{ measure: Measure, seconds: number, pages: number }> {
  const times: number[] = []
  let bytes = 0
  let errors = 0
  const started = performance.now()
  for (let page = 1, pages = 1; page <= pages; page++) {
    const t0 = performance.now()
    const res = await fetch(`${server.url}/api/content/bench_post?_per_page=1000&_page=${page}${query}`)
    const body = Buffer.from(await res.arrayBuffer())
    times.push(performance.now() - t0)
    bytes += body.length
    if (!res.ok) { errors++; continue }
    pages = (JSON.parse(body.toString()) as { pages: number }).pages
  }
  const seconds = (performance.now() - started) / 1000
  const sorted = [...times].sort((a, b) => a - b)
  const at = (q: number): number => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0)
  return {
    measure: { reqPerSec: Math.round(times.length / seconds * 10) / 10, p50: at(0.5), p99: at(0.99), bytes: Math.round(bytes / times.length), errors },
    seconds,
    pages: times.length
  }
}

/**
 * The full pull (issue 22): every page of 1000 of the SQLite list collection (or PostgreSQL's, in
 * the postgres phase), once without and once with `_resolve=1`, cache on, on a server started for
 * it. Its RSS is read throughout (the peak) and for 3 s after (the most, and at the end): both at
 * most 300 MB. On the entries phase's data when it ran; otherwise the collection is made here.
 * --rows may leave out either pass.
 */
async function pullPhase (store: 'sqlite' | 'postgres'): Promise<void> {
  const dataDir = path.join(scratch, `data-${store}`)
  const entries = LIST_ENTRIES[store]
  const pages = Math.ceil(entries / 1000)
  const wantedPulls = [
    { name: `full pull, ${pages} pages of 1000, cache on`, query: '' },
    { name: `full pull, ${pages} pages of 1000, _resolve=1, cache on`, query: '&_resolve=1' }
  ].filter(pull => wanted(pull.name))
  // --rows left both out: nothing to measure, so no data to make either.
  if (wantedPulls.length === 0) return
  let server = await startLectern(store, dataDir, { CMS_CACHE_MAX: '0' })
  try {
    const res = await fetch(`${server.url}/api/content/bench_post?_per_page=1`)
    if (res.status === 404) await createSchemas(server)
    const total = res.ok ? (await res.json() as { total: number }).total : 0
    if (total < entries) await createEntries(server, total, entries)
    await server.stop()
    server = await startLectern(store, dataDir)
    const start = rssMb(server.child)
    const watch = watchRss(server.child)
    const passes: Array<{ name: string, pull: Awaited<ReturnType<typeof pullPages>> }> = []
    for (const pass of wantedPulls) passes.push({ name: pass.name, pull: await pullPages(server, pass.query) })
    const peak = watch.stop()
    const afterWatch = watchRss(server.child)
    await new Promise(resolve => setTimeout(resolve, 3000))
    const after = afterWatch.stop()
    const atEnd = rssMb(server.child)
    const pass = peak !== null && after !== null && Math.max(peak, after) <= 300
    extra[store === 'sqlite' ? 'full_pull' : `full_pull_${store}`] = { entries, rss_mb: { start, peak, after, at_end: atEnd }, passes: passes.map(({ name, pull: p }) => ({ name, pages: p.pages, seconds: Math.round(p.seconds * 10) / 10, ...p.measure })) }
    for (const { name, pull: p } of passes) {
      const row: Row = {
        name,
        store,
        lectern: p.measure,
        baseline: null,
        ratio: null,
        target: 'RSS <= 300 MB, peak and after',
        pass: pass && p.measure.errors === 0,
        note: `pages/s in req/s; server RSS ${String(start)} MB at start, peak ${String(peak)} MB, ${String(after)} MB at most in the 3 s after (${String(atEnd)} MB at the end)`
      }
      rows.push(row)
      printRow(row)
    }
  } finally {
    await server.stop()
  }
}

/** The most RSS `child` has had so far (VmHWM: exact, where sampling VmRSS misses short peaks), in MB. */
function peakRssMb (child: ChildProcess): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${String(child.pid)}/status`, 'utf8'))
    return m?.[1] === undefined ? null : Math.round(Number(m[1]) / 1024)
  } catch { return null }
}

/** Runs `lectern export <target>` to its end: its time, exit code and peak RSS (read until it exits). */
async function timedExport (target: string[]): Promise<{ seconds: number, code: number | null, peak: number | null }> {
  const out = path.join(scratch, 'export')
  rmSync(out, { recursive: true, force: true })
  const started = process.hrtime.bigint()
  const child = spawn(process.execPath, [path.resolve(here, '..', 'cli.js'), 'export', ...target, '--out', out], { stdio: ['ignore', 'pipe', 'inherit'] })
  let peak: number | null = null
  const timer = setInterval(() => { peak = peakRssMb(child) ?? peak }, 10)
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  clearInterval(timer)
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, code, peak }
}

/**
 * A full export (issue 25) of the SQLite list collection (the pull phase's data, made here when that
 * phase did not run), in both modes: `--data-dir`, the command's process holding the app, and
 * `--server`, against a server started for it (default settings). Entries per second, and the peak
 * RSS of the command's process: at most 300 MB. With --server the note gives the server's peak
 * too, which its cache settings bound (not a target of this row).
 */
async function exportPhase (): Promise<void> {
  const dataDir = path.join(scratch, 'data-sqlite')
  const entries = LIST_ENTRIES.sqlite
  const modes = ['--data-dir', '--server'].map(mode => ({ mode, name: `export, ${entries} entries (lectern export ${mode})` })).filter(m => wanted(m.name))
  if (modes.length === 0) return
  await (await listCollectionServer(dataDir, entries)).stop()
  extra.export = { entries }
  for (const { mode, name } of modes) {
    const server = mode === '--server' ? await startLectern('sqlite', dataDir) : null
    let run: Awaited<ReturnType<typeof timedExport>>
    let serverPeak: number | null = null
    try {
      run = await timedExport(server === null ? ['--data-dir', dataDir, '--store', 'sqlite'] : ['--server', server.url])
      if (server !== null) serverPeak = peakRssMb(server.child)
    } finally {
      await server?.stop()
    }
    const perSecond = Math.round(entries / run.seconds)
    const seconds = Math.round(run.seconds * 10) / 10
    Object.assign(extra.export as object, { [mode.slice(2)]: { seconds, entries_per_s: perSecond, rss_mb_peak: run.peak, server_rss_mb_peak: serverPeak, exit_code: run.code } })
    const row: Row = {
      name,
      store: 'sqlite',
      lectern: { reqPerSec: perSecond, p50: 0, p99: 0, bytes: 0, errors: run.code === 0 ? 0 : 1 },
      baseline: null,
      ratio: null,
      target: 'peak RSS <= 300 MB',
      pass: run.code === 0 && run.peak !== null && run.peak <= 300,
      note: `entries/s in req/s; ${seconds} s; the command's peak RSS ${String(run.peak)} MB${server === null ? '' : `; the server's ${String(serverPeak)} MB`}`
    }
    rows.push(row)
    printRow(row)
  }
}

/** The SQLite list collection's data, made when no earlier phase made it; a server on it, cache off. */
async function listCollectionServer (dataDir: string, entries: number): Promise<Running> {
  let server = await startLectern('sqlite', dataDir, { CMS_CACHE_MAX: '0' })
  const res = await fetch(`${server.url}/api/content/bench_post?_per_page=1`)
  if (res.status === 404) await createSchemas(server)
  const total = res.ok ? (await res.json() as { total: number }).total : 0
  if (total < entries) {
    await createEntries(server, total, entries)
    // A fresh start, as the pull rows: no state left over from making the data.
    await server.stop()
    server = await startLectern('sqlite', dataDir, { CMS_CACHE_MAX: '0' })
  }
  return server
}

/** Requests one after another until `nextUrl` says the walk is over: each one's time (ms), bytes and errors. */
async function walkPages (first: string, nextUrl: (body: Record<string, unknown>) => string | null): Promise<{ measure: Measure, seconds: number, times: number[], last: Record<string, unknown> }> {
  const times: number[] = []
  let bytes = 0
  let errors = 0
  let last: Record<string, unknown> = {}
  const started = performance.now()
  for (let url: string | null = first; url !== null;) {
    const t0 = performance.now()
    const res = await fetch(url)
    const body = Buffer.from(await res.arrayBuffer())
    times.push(performance.now() - t0)
    bytes += body.length
    if (!res.ok) { errors++; break }
    last = JSON.parse(body.toString()) as Record<string, unknown>
    url = nextUrl(last)
  }
  const seconds = (performance.now() - started) / 1000
  const sorted = [...times].sort((a, b) => a - b)
  const at = (q: number): number => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0)
  const measure = { reqPerSec: Math.round(times.length / seconds * 10) / 10, p50: at(0.5), p99: at(0.99), bytes: Math.round(bytes / times.length), errors }
  return { measure, seconds, times, last }
}

/**
 * Sync and keyset paging (issue 24), on the SQLite list collection (--list-entries), cache off:
 * an initial sync in answers of 1000 (pages/s, beside the pull rows); an incremental sync
 * answering 100 changes in one request, whose server CPU per request is paired with an uncached
 * page of 100's (target: at most twice); and a keyset walk with `_after` in pages of 100, whose
 * page near the end is paired with the page after the first (target: no more CPU per page,
 * within 10% for noise). The whole walk is also timed once, its first and last pages compared.
 */
async function syncPhase (): Promise<void> {
  const entries = LIST_ENTRIES.sqlite
  const names = {
    initial: `initial sync, ${Math.ceil(entries / 1000)} answers of 1000`,
    incremental: 'incremental sync, 100 changes, one request',
    keyset: `keyset walk, pages of 100, last vs first (${entries} entries)`
  }
  if (!Object.values(names).some(wanted)) return
  const server = await listCollectionServer(path.join(scratch, 'data-sqlite'), entries)
  try {
    const syncUrl = (body: Record<string, unknown>): string | null => body.more === true ? `${server.url}/api/sync?cursor=${encodeURIComponent(String(body.cursor))}&_per_page=1000` : null
    const initial = await walkPages(`${server.url}/api/sync?initial=true&_per_page=1000`, syncUrl)
    if (wanted(names.initial)) {
      const row: Row = {
        name: names.initial,
        store: 'sqlite',
        lectern: initial.measure,
        baseline: null,
        ratio: null,
        target: 'pages/s, beside the pull rows',
        pass: initial.measure.errors === 0,
        note: `answers/s in req/s; ${initial.times.length} answers in ${initial.seconds.toFixed(1)} s`
      }
      rows.push(row)
      printRow(row)
    }
    if (wanted(names.incremental)) await incrementalRow(server, names.incremental, String(initial.last.cursor))
    if (wanted(names.keyset)) await keysetRow(server, names.keyset, entries)
  } finally {
    await server.stop()
  }
}

/** Distinct cursors of the incremental row: each answers its own 100 changes. */
const INCREMENTAL_CURSORS = 100

/**
 * Fresh incremental answers of 100 changes each, paired with an uncached page of 100. After the
 * initial run, 200 entries are patched one by one and a cursor taken after each of the first
 * 100: each cursor's answer is the next 100 changes (`more: true`), a different answer per
 * cursor, and the load sends them in turn. The server runs with its cache off, so the sync
 * service keeps no answer (plugins/sync.ts) and every request reads the log and renders afresh.
 */
async function incrementalRow (server: Running, name: string, initialCursor: string): Promise<void> {
  const syncPath = (cursor: string): string => `/api/sync?cursor=${encodeURIComponent(cursor)}`
  const cursors: string[] = []
  let cursor = initialCursor
  for (let i = 0; i < 2 * INCREMENTAL_CURSORS; i++) {
    await api(server, 'PATCH', `/api/content/bench_post/entry-${i * 487}`, { title: `Changed ${i}` })
    if (i >= INCREMENTAL_CURSORS) continue
    cursors.push(cursor)
    cursor = String((await api(server, 'GET', syncPath(cursor)) as { cursor: string }).cursor)
  }
  for (const c of [cursors[0], cursors.at(-1)] as string[]) {
    const answer = await api(server, 'GET', syncPath(c)) as { items: unknown[], more: boolean }
    if (answer.items.length !== 100 || !answer.more) throw new Error(`${name}: ${answer.items.length} items, more ${String(answer.more)}`)
  }
  const syncRequests: CannonRequest[] = cursors.map(c => ({ method: 'GET', path: syncPath(c) }))
  const pageRequest: CannonRequest = { method: 'GET', path: '/api/content/bench_post?_per_page=100&_page=7' }
  const target = { url: server.url, pid: server.child.pid }
  const paired = await measurePair(target, syncRequests, target, pageRequest)
  addPairedRow(name, paired, 'CPU <= 2x page of 100',
    paired.lectern.errors === 0 && paired.cpuRatio !== null && paired.cpuRatio >= 0.5,
    `req/s: ${INCREMENTAL_CURSORS} distinct cursors in turn, each answered afresh; base/s: an uncached page of 100; cpu%: its server CPU per request over the sync answer's ` +
      `(${median(paired.rounds.map(r => r.server_cpu_us.lectern ?? 0))} µs against ${median(paired.rounds.map(r => r.server_cpu_us.baseline ?? 0))} µs)`)
}

/** A SQLite row of two Lectern requests measured against each other (measurePair), recorded and printed. */
function addPairedRow (name: string, paired: Awaited<ReturnType<typeof measurePair>>, target: string, pass: boolean, note: string): void {
  const row: Row = {
    name,
    store: 'sqlite',
    lectern: paired.lectern,
    baseline: paired.baseline,
    ratio: paired.ratio,
    cpu_ratio: paired.cpuRatio,
    rounds: paired.rounds,
    target,
    pass,
    note
  }
  rows.push(row)
  printRow(row)
}

/** Rounds of the keyset row at least. */
const KEYSET_ROUNDS = 11

/** The page after the first and the last page of a keyset walk, paired; and the whole walk timed once. */
async function keysetRow (server: Running, name: string, entries: number): Promise<void> {
  const list = `${server.url}/api/content/bench_post?_per_page=100`
  const nextUrl = (body: Record<string, unknown>): string | null => typeof body.next === 'string' ? `${list}&_after=${encodeURIComponent(body.next)}` : null
  const walk = await walkPages(list, nextUrl)
  const pages = Math.ceil(entries / 100)
  // A numbered page's `next` is a cursor of the same query: the one before the last page gives the last.
  const first = await api(server, 'GET', '/api/content/bench_post?_per_page=100') as { next: string }
  const beforeLast = await api(server, 'GET', `/api/content/bench_post?_per_page=100&_page=${pages - 1}`) as { next: string }
  const firstRequest: CannonRequest = { method: 'GET', path: `/api/content/bench_post?_per_page=100&_after=${encodeURIComponent(first.next)}` }
  const lastRequest: CannonRequest = { method: 'GET', path: `/api/content/bench_post?_per_page=100&_after=${encodeURIComponent(beforeLast.next)}` }
  const target = { url: server.url, pid: server.child.pid }
  // Nearly equal costs, compared against a line: more rounds than other rows, so the median of
  // the per-round ratios (each round both pages, in alternating order) stands still between runs.
  const paired = await measurePair(target, lastRequest, target, firstRequest, Math.max(ROUNDS, KEYSET_ROUNDS))
  const head = median(walk.times.slice(1, 11))
  const tail = median(walk.times.slice(-10))
  addPairedRow(name, paired, 'last page CPU <= first',
    walk.measure.errors === 0 && paired.lectern.errors === 0 && paired.cpuRatio !== null && paired.cpuRatio >= 0.9,
    'req/s: the last page; base/s: the page after the first; cpu%: the first\'s CPU per request over the last\'s. ' +
      `The whole walk: ${walk.times.length} pages in ${walk.seconds.toFixed(1)} s, median ${head.toFixed(1)} ms over pages 2-11, ${tail.toFixed(1)} ms over the last 10`)
}

async function transformPhase (): Promise<void> {
  const dataDir = path.join(scratch, 'data-transform')
  const server = await startLectern('sqlite', dataDir)
  try {
    const image = await sharp({ create: { width: 1600, height: 1200, channels: 3, background: { r: 40, g: 120, b: 200 } } })
      .composite([{ input: Buffer.from('<svg width="1600" height="1200"><circle cx="800" cy="600" r="500" fill="orange"/></svg>') }])
      .jpeg({ quality: 90 }).toBuffer()
    const form = new FormData()
    form.append('file', new Blob([image], { type: 'image/jpeg' }), 'bench-photo.jpg')
    const up = await fetch(`${server.url}/api/assets`, { method: 'POST', body: form })
    if (up.status !== 201) throw new Error(`upload: ${up.status} ${await up.text()}`)
    const uploaded = await up.json() as { items: Array<{ path: string }> }
    const assetPath = uploaded.items[0]?.path ?? ''
    const rel = assetPath.replace(/^\/api\/assets\//, '')
    const times: number[] = []
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now()
      const res = await fetch(`${server.url}/api/transform/${rel}?w=${400 + i}&format=webp`)
      await res.arrayBuffer()
      if (!res.ok) throw new Error(`transform: ${res.status}`)
      times.push(performance.now() - t0)
    }
    const ms = times.reduce((a, b) => a + b, 0) / times.length
    extra.first_transform_1600_to_400_webp_ms = Math.round(ms)
    console.log(`first-time 1600→400 px WebP transform: ${ms.toFixed(0)} ms (mean of ${times.length} distinct variants)`)
    await compare('cached transform variant (400px webp)', '-', server,
      { method: 'GET', path: `/api/transform/${rel}?w=400&format=webp` }, { ratio: 0.5, text: '>= 50% of baseline' })
  } finally {
    await server.stop()
  }
}

const ADMIN_KEY = 'bench-admin-key-0123456789abcdef'
/** The admin list row's collection (issue 27: a list of 5,000 entries shows its first page in under 1 s). */
const ADMIN_LIST_ENTRIES = 5000

/** The admin list row's collection, made over HTTP with the admin's key (the bench's own writes go keyless). */
async function adminListCollection (server: Running): Promise<void> {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` }
  const res = await fetch(`${server.url}/api/schemas`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ ...BENCH_POST, label: 'Bench posts' })
  })
  if (res.status !== 201) throw new Error(`admin list schema: ${res.status} ${await res.text()}`)
  let i = 0
  const made = await cannon(server.url, {
    method: 'POST',
    path: '/api/content/bench_post',
    headers,
    setupRequest: req => ({ ...req, body: JSON.stringify(entryBody(i++)) })
  }, { amount: ADMIN_LIST_ENTRIES })
  if (made.non2xx > 0 || made.errors > 0) throw new Error(`admin list entries: ${made.non2xx} non-2xx, ${made.errors} errors`)
}

const sortedMedian = (times: number[]): { median: number, worst: number } => {
  const sorted = [...times].sort((a, b) => a - b)
  return { median: sorted[sorted.length >> 1] ?? Infinity, worst: sorted[sorted.length - 1] ?? Infinity }
}

/**
 * The admin UI (issue 8: loads in under 1 s on localhost, under 200 KB of gzipped JavaScript):
 * the sign-in page opened in headless Chromium, each time in a new browser context (an empty
 * HTTP cache), from navigation start to the load event. Five loads; the verdict is on the median,
 * the worst is printed too. Then (issue 27) a list of 5,000 entries, signed in: from navigation
 * start to its first row visible, five loads, each in a new context signed in through the API.
 */
async function adminPhase (): Promise<void> {
  const gzipped = gzippedJavaScriptBytes(adminDist)
  // With keys configured the UI opens on its sign-in page (without, it opens straight on content).
  const server = await startLectern('sqlite', path.join(scratch, 'data-admin'), { CMS_API_KEYS: `${ADMIN_KEY}:admin` })
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
  try {
    const times: number[] = []
    let first = 0
    for (let i = 0; i < 6; i++) {
      const context = await browser.newContext()
      try {
        const page = await context.newPage()
        await page.goto(`${server.url}/admin/`, { waitUntil: 'load' })
        await page.getByRole('heading', { name: 'Sign in to Lectern' }).waitFor()
        const ms = await navigationMs(page)
        if (ms === null) throw new Error('no navigation timing')
        // The first load also warms Chromium itself (its renderer process, V8's code cache):
        // printed, not counted.
        if (i === 0) first = ms
        else times.push(ms)
      } finally {
        await context.close()
      }
    }
    const { median, worst } = sortedMedian(times)
    extra.admin_page_load_ms = { median: Math.round(median), worst: Math.round(worst), loads: times.map(Math.round), first_in_a_new_browser: Math.round(first) }
    extra.admin_js_gzipped_kb = Math.round(gzipped / 102.4) / 10
    const pass = median < 1000 && gzipped < 200 * 1024
    console.log(`admin UI sign-in page, new browser context each time: median ${median.toFixed(0)} ms, worst ${worst.toFixed(0)} ms of ${times.length} loads ` +
      `(the first, in a browser just started: ${first.toFixed(0)} ms, not counted); ` +
      `gzipped JavaScript ${(gzipped / 1024).toFixed(1)} KB — target < 1000 ms and < 200 KB: ${pass ? 'PASS' : 'FAIL'}`)

    const started = performance.now()
    await adminListCollection(server)
    console.log(`admin list row: ${ADMIN_LIST_ENTRIES} entries created in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    const listTimes: number[] = []
    for (let i = 0; i < 5; i++) {
      const context = await browser.newContext()
      try {
        // Signed in as the admin does it (POST /api/session): the context holds the session cookie.
        const signIn = await context.request.post(`${server.url}/api/session`, { data: { key: ADMIN_KEY } })
        if (signIn.status() !== 200) throw new Error(`sign-in answered ${signIn.status()}`)
        listTimes.push(await firstRowMs(await context.newPage(), `${server.url}/admin/content/bench_post`))
      } finally {
        await context.close()
      }
    }
    const list = sortedMedian(listTimes)
    const listPass = list.median < 1000
    extra.admin_list_first_page_ms = { entries: ADMIN_LIST_ENTRIES, median: Math.round(list.median), worst: Math.round(list.worst), loads: listTimes.map(Math.round) }
    extra.admin_pass = pass && listPass
    console.log(`admin UI list of ${ADMIN_LIST_ENTRIES} entries, signed in, new browser context each time, to the first row visible: ` +
      `median ${list.median.toFixed(0)} ms, worst ${list.worst.toFixed(0)} ms of ${listTimes.length} loads — target < 1000 ms: ${listPass ? 'PASS' : 'FAIL'}`)
  } finally {
    await browser.close()
    await server.stop()
  }
}

const POSTGRES_LISTS: Array<[label: string, path: string]> = [
  ['filter + sort + page of 20', '/api/content/bench_post?category=news&score[gte]=100&_sort=-score&_per_page=20&_page=3'],
  ['page of 100', '/api/content/bench_post?_per_page=100&_page=7']
]

/**
 * Issue 23's rows on PostgreSQL, beside SQLite's: the collection created over HTTP (the create
 * row: every entry of it, durable), then with the cache off a single GET, the filtered and sorted
 * page of 20 (>= 15% of the baseline, p99 <= 50 ms) and a page of 100, on a server restarted
 * after the creates; then, on a server restarted with the cache on, the same three as cache hits
 * (>= 70%). The issue sets no target for the uncached GET and page of 100: they get no verdict.
 */
async function postgresEntryRows (): Promise<void> {
  const entries = LIST_ENTRIES.postgres
  const dataDir = path.join(scratch, 'data-postgres')
  let server = await startLectern('postgres', dataDir, { CMS_CACHE_MAX: '0' })
  try {
    await createSchemas(server)
    const before = { lectern: processCpuUs(server.child.pid), database: groupCpuUs(server.database?.() ?? []) }
    const m = toMeasure(await createEntries(server, 0, entries))
    const note = cpuNote([perRequestUs(before.lectern, processCpuUs(server.child.pid), entries)],
      [perRequestUs(before.database, groupCpuUs(server.database?.() ?? []), entries)])
    const createName = `create (${entries} entries, durable)`
    if (wanted(createName)) {
      const row: Row = { name: createName, store: 'postgres', lectern: m, baseline: null, ratio: null, target: '>= 1000 creates/s', pass: m.errors === 0 && m.reqPerSec >= 1000, note }
      rows.push(row)
      printRow(row)
    }
    // A fresh start, as the pull rows: reads measured apart from the creates (a CPU profile each).
    await server.stop()
    server = await startLectern('postgres', dataDir, { CMS_CACHE_MAX: '0' })
    const randomGet: CannonRequest = { method: 'GET', setupRequest: req => ({ ...req, path: `/api/content/bench_post/entry-${Math.floor(Math.random() * entries)}` }) }
    const noTarget = { text: 'none set', none: true as const }
    await compare(`single GET, ${entries} entries, cache off`, 'postgres', server, randomGet, noTarget)
    for (const [label, url] of POSTGRES_LISTS) {
      const target = label.startsWith('filter') ? { ratio: 0.15, p99: 50, text: '>= 15% of baseline, p99 <= 50ms' } : noTarget
      await compare(`${label}, ${entries} entries, cache off`, 'postgres', server, { method: 'GET', path: url }, target)
    }
    extra.rss_mb_after_list_postgres = rssMb(server.child)
    await server.stop()
    server = await startLectern('postgres', dataDir)
    const cacheHit = { ratio: 0.7, text: '>= 70% of baseline' }
    await compare(`single GET, ${entries} entries, cache hit`, 'postgres', server, { method: 'GET', path: '/api/content/bench_post/entry-42' }, cacheHit)
    for (const [label, url] of POSTGRES_LISTS) {
      await compare(`${label}, ${entries} entries, cache hit`, 'postgres', server, { method: 'GET', path: url }, cacheHit)
    }
    extra.rss_mb_after_cached_postgres = rssMb(server.child)
    rssVerdict('postgres', entries)
  } finally {
    await server.stop()
  }
}

/**
 * The PostgreSQL phase: an embedded PostgreSQL 18 of its own (bench/postgres.ts), its processes
 * on the servers' core when the bench pins (the backends it forks later inherit that), Lectern on
 * it with CMS_STORE=postgres; the rows above, then the full pull of that same collection.
 */
async function postgresPhase (): Promise<void> {
  const explain = opts['postgres-explain']
  const database = await startPostgres(nextPort++, explain === '' ? undefined : path.resolve(explain))
  if (PINNED) for (const pid of database.pids()) pin(pid, 0)
  postgres = database
  try {
    await postgresEntryRows()
    await pullPhase('postgres')
  } finally {
    postgres = null
    await database.stop()
  }
}

// ---------- main ----------
async function main (): Promise<void> {
  console.log(`Lectern benchmark: ${CONNECTIONS} connections; per row ${WARMUP}s of warm-up, then ${ROUNDS} rounds of ${DURATION}s ` +
    'for Lectern and the baseline back to back, in alternating order, the baseline sent the same requests ' +
    '(req/s: medians; %: median of the rounds\' req/s ratios; cpu%: median of the baseline\'s CPU time per request ' +
    `over Lectern's, not a target; p99: the worst round); ${os.cpus().length} cores, ` +
    `${PINNED ? 'servers on core 0, load on core 1' : 'not pinned'}, node ${process.version}`)
  header()
  const failures: string[] = []
  // The entries phase makes its stores' data first, whichever of its rows are asked for.
  if (['create', 'get', 'list', 'resolve'].some(phase => ONLY.has(phase))) {
    for (const store of STORES) {
      try { await entriesPhase(store) } catch (err) { failures.push(`${store}: ${(err as Error).message}`) }
    }
  }
  if (ONLY.has('versions')) {
    for (const store of STORES) {
      try { await versionsPhase(store) } catch (err) { failures.push(`versions ${store}: ${(err as Error).message}`) }
    }
  }
  if (ONLY.has('pull') && STORES.includes('sqlite')) {
    try { await pullPhase('sqlite') } catch (err) { failures.push(`pull: ${(err as Error).message}`) }
  }
  if (ONLY.has('export') && STORES.includes('sqlite')) {
    try { await exportPhase() } catch (err) { failures.push(`export: ${(err as Error).message}`) }
  }
  if (ONLY.has('sync') && STORES.includes('sqlite')) {
    try { await syncPhase() } catch (err) { failures.push(`sync: ${(err as Error).message}`) }
  }
  if (ONLY.has('postgres')) {
    try { await postgresPhase() } catch (err) { failures.push(`postgres: ${(err as Error).message}`) }
  }
  if (ONLY.has('transform')) {
    try { await transformPhase() } catch (err) { failures.push(`transform: ${(err as Error).message}`) }
  }
  if (ONLY.has('admin')) {
    try { await adminPhase() } catch (err) { failures.push(`admin: ${(err as Error).message}`) }
  }
  const out = { date: new Date().toISOString(), node: process.version, cores: os.cpus().length, connections: CONNECTIONS, duration_s: DURATION, warmup_s: WARMUP, rounds: ROUNDS, pinned: PINNED, entries: ENTRIES, list_entries: LIST_ENTRIES, rows, extra, failures }
  writeFileSync(resultsFile, JSON.stringify(out, null, 2) + '\n')
  console.log(`\nwrote ${resultsFile}`)
  if (failures.length > 0) {
    console.log('phases that could not run:')
    for (const f of failures) console.log(`  - ${f}`)
  }
  rmSync(scratch, { recursive: true, force: true })
}

await readFile(serverJs).catch(() => { throw new Error('run `npm run build` first (npm run bench does)') })
await main()
