// A soak test, not part of `npm test` (issue 28): a mixed read/write load at 50 connections for
// 5 minutes against the real server (dist/server.js) on each store, sampling the server's RSS
// every 5 s. It passes when no request failed and RSS is flat over the second half (it grows by
// at most --max-growth MB, default 32, from the second half's first sample to its highest).
//
//   npx tsc -p tsconfig.build.json && node dist/bench/soak.js [--stores sqlite,file]
//     [--duration 300] [--connections 50] [--entries 200] [--max-growth 32]
//
// Each connection loops over: read an entry, list a page, PATCH a field (a unique one half the
// time, with a new value each time: what leaked in the file store), read again, create an
// entry, PUT it, list by a filter, delete it. About half the requests are writes.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'

const { values: opts } = parseArgs({
  options: {
    stores: { type: 'string', default: 'sqlite,file' },
    duration: { type: 'string', default: '300' },
    connections: { type: 'string', default: '50' },
    entries: { type: 'string', default: '200' },
    'max-growth': { type: 'string', default: '32' }
  }
})
const DURATION_MS = Number(opts.duration) * 1000
const CONNECTIONS = Number(opts.connections)
const ENTRIES = Number(opts.entries)
const MAX_GROWTH_MB = Number(opts['max-growth'])
const SAMPLE_MS = 5000
const COLLECTION = 'soak'
const serverJs = path.resolve(import.meta.dirname, '..', 'server.js')

interface Sample { atS: number, rssMb: number }
interface Outcome { store: string, requests: number, errors: number, errorKinds: Record<string, number>, samples: Sample[], secondHalf: { first: number, min: number, max: number, last: number }, flat: boolean }

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const address = srv.address()
      srv.close(() => { resolve(typeof address === 'object' && address !== null ? address.port : 0) })
    }).on('error', reject)
  })
}

function rssMb (child: ChildProcess): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${String(child.pid)}/status`, 'utf8'))
    return m?.[1] === undefined ? null : Math.round(Number(m[1]) / 1024)
  } catch { return null }
}

async function start (store: string, dataDir: string): Promise<{ child: ChildProcess, url: string }> {
  const port = await freePort()
  const child = spawn(process.execPath, [serverJs], {
    env: { PATH: process.env.PATH ?? '', CMS_PORT: String(port), CMS_HOST: '127.0.0.1', CMS_DATA_DIR: dataDir, CMS_STORE: store, CMS_SEED: 'false', CMS_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit']
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/health`)).ok) return { child, url }
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error('the server did not start')
}

async function send (pool: Pool, method: string, url: string, body?: object): Promise<number> {
  const res = await pool.request({
    method: method as 'GET',
    path: url,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  await res.body.dump()
  return res.statusCode
}

async function prepare (pool: Pool): Promise<void> {
  const schema = { name: COLLECTION, fields: { title: { field_type: 'string' }, n: { field_type: 'integer' }, code: { field_type: 'string', unique: true } } }
  if (await send(pool, 'POST', '/api/schemas', schema) !== 201) throw new Error('could not create the schema')
  for (let i = 0; i < ENTRIES; i++) {
    if (await send(pool, 'POST', `/api/content/${COLLECTION}`, { _slug: `e${i}`, _status: 'published', title: `entry ${i}`, n: i, code: `c${i}` }) !== 201) throw new Error('could not seed')
  }
}

/** One connection's loop until `until`; every answer that is not the one expected counts as an error. */
async function connection (pool: Pool, id: number, until: number, tally: { requests: number, errors: number, kinds: Record<string, number> }): Promise<void> {
  let round = 0
  const expect = async (what: string, want: number, status: Promise<number>): Promise<void> => {
    tally.requests++
    let got: number | string
    try { got = await status } catch (err) { got = (err as Error).name }
    if (got !== want) {
      tally.errors++
      tally.kinds[`${what}:${got}`] = (tally.kinds[`${what}:${got}`] ?? 0) + 1
    }
  }
  while (Date.now() < until) {
    const slug = `e${Math.floor(Math.random() * ENTRIES)}`
    const own = `k${id}-${round++}`
    const base = `/api/content/${COLLECTION}`
    await expect('get', 200, send(pool, 'GET', `${base}/${slug}`))
    await expect('list', 200, send(pool, 'GET', `${base}?_page=${1 + Math.floor(Math.random() * 5)}&_per_page=20`))
    // A unique value never used before, or a plain field: the file store's unique lookup must not grow.
    const patch = Math.random() < 0.5 ? { code: `${own}-${Math.random().toString(36).slice(2)}` } : { n: round }
    await expect('patch', 200, send(pool, 'PATCH', `${base}/${slug}`, patch))
    await expect('get', 200, send(pool, 'GET', `${base}/${slug}`))
    await expect('create', 201, send(pool, 'POST', base, { _slug: own, title: 'own', n: round, code: own }))
    await expect('put', 200, send(pool, 'PUT', `${base}/${own}`, { _status: 'published', title: 'put', n: round, code: `${own}-p` }))
    await expect('filter', 200, send(pool, 'GET', `${base}?n[gte]=${round}&_per_page=10`))
    await expect('delete', 204, send(pool, 'DELETE', `${base}/${own}`))
  }
}

async function soak (store: string): Promise<Outcome> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `lectern-soak-${store}-`))
  const { child, url } = await start(store, dataDir)
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 })
  try {
    await prepare(pool)
    const began = Date.now()
    const samples: Sample[] = []
    const sample = (): void => { const mb = rssMb(child); if (mb !== null) samples.push({ atS: Math.round((Date.now() - began) / 1000), rssMb: mb }) }
    sample()
    const timer = setInterval(sample, SAMPLE_MS)
    const tally = { requests: 0, errors: 0, kinds: {} }
    await Promise.all(Array.from({ length: CONNECTIONS }, async (_, i) => { await connection(pool, i, began + DURATION_MS, tally) }))
    clearInterval(timer)
    sample()
    const second = samples.filter(s => s.atS >= DURATION_MS / 2000).map(s => s.rssMb)
    const half = { first: second[0] ?? 0, min: Math.min(...second), max: Math.max(...second), last: second.at(-1) ?? 0 }
    return { store, requests: tally.requests, errors: tally.errors, errorKinds: tally.kinds, samples, secondHalf: half, flat: half.max - half.first <= MAX_GROWTH_MB }
  } finally {
    await pool.close()
    child.kill('SIGTERM')
    await new Promise(resolve => child.once('exit', resolve))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

let failed = false
for (const store of opts.stores.split(',')) {
  const outcome = await soak(store)
  const { samples, ...summary } = outcome
  console.log(JSON.stringify({ ...summary, reqPerSec: Math.round(outcome.requests / (DURATION_MS / 1000)), rss: samples.map(s => `${s.atS}s:${s.rssMb}`).join(' ') }))
  if (outcome.errors > 0 || !outcome.flat) failed = true
}
process.exitCode = failed ? 1 : 0
