// The suite's PostgreSQL harness: a schema per app on the run's server, found by the search
// path the URL carries; records of dead runs cleared; and a supervisor that stops its server
// once the tap runner it serves is gone.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import pg from 'pg'
import { RUN_DIR, postgresUrl, readServer, serverFile, suiteDatabaseUrl, withSearchPath } from '../fixtures/postgres.js'
import { TS_CHILD_ARGS, TS_CHILD_ENV, isAlive } from '../fixtures/processes.js'
import { ALL_STORES, DEFAULT_TEST_STORES, databaseUrlFor, storeEnv, testStores } from '../helper.js'
import { clearStale } from './stale.js'

async function query<T extends pg.QueryResultRow> (url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<T>(sql, values)).rows
  } finally {
    await client.end()
  }
}

async function schemaExists (name: string): Promise<boolean> {
  const rows = await query(suiteDatabaseUrl(), 'SELECT 1 FROM pg_namespace WHERE nspname = $1', [name])
  return rows.length === 1
}

function schemaOf (url: string): string {
  return /search_path=(\w+)/.exec(new URL(url).searchParams.get('options') ?? '')?.[1] ?? ''
}

/** Polls `check` every 50 ms until it holds or `ms` pass. */
async function until (check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) return false
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return true
}

t.test('postgresUrl: a schema of its own per call, the same per key, dropped when the test ends', async t => {
  let kept = ''
  await t.test('within a test', async t => {
    const a = await postgresUrl(t)
    const b = await postgresUrl(t)
    const keyed = await postgresUrl(t, 'data-dir-1')
    t.equal(await postgresUrl(t, 'data-dir-1'), keyed, 'one key, one schema')
    t.not(a, b)
    t.not(keyed, a)
    kept = schemaOf(a)
    t.match(kept, /^lectern_[0-9a-f]{16}$/, 'a generated name')
    // node-postgres passes `options` on: the table lands in the URL's schema.
    await query(a, 'CREATE TABLE probe (n int)')
    const [row] = await query<{ schema: string }>(a, 'SELECT current_schema() AS schema')
    t.equal(row?.schema, kept)
    const rows = await query(b, "SELECT 1 FROM pg_tables WHERE tablename = 'probe' AND schemaname = current_schema()")
    t.equal(rows.length, 0, 'another schema does not see it')
  })
  t.notOk(await schemaExists(kept), 'dropped at the end of its test')
  const again = await postgresUrl(t, 'data-dir-1')
  t.ok(await schemaExists(schemaOf(again)), 'a key whose schema was dropped gets a new one')
})

t.test('the helper: a postgres app gets its data dir\'s schema; the others no database', async t => {
  const dataDir = path.join(os.tmpdir(), 'lectern-not-made', 'data')
  const env = await storeEnv(t, 'postgres', dataDir)
  t.equal(env.CMS_STORE, 'postgres')
  t.equal(env.CMS_DATABASE_URL, await databaseUrlFor(t, 'postgres', `${dataDir}/`), 'one data dir (however written), one schema')
  t.ok(await schemaExists(schemaOf(env.CMS_DATABASE_URL ?? '')))
  t.not(await databaseUrlFor(t, 'postgres', `${dataDir}-2`), env.CMS_DATABASE_URL)
  t.strictSame(await storeEnv(t, 'sqlite', dataDir), { CMS_STORE: 'sqlite' })
  t.equal(await databaseUrlFor(t, 'file', dataDir), undefined)
})

t.test('LECTERN_TEST_STORES picks the stores the tests run on', async t => {
  t.strictSame(testStores(undefined), DEFAULT_TEST_STORES.split(','))
  t.strictSame(testStores(' '), DEFAULT_TEST_STORES.split(','))
  t.strictSame(testStores('postgres, sqlite,postgres'), ['postgres', 'sqlite'])
  t.strictSame(testStores(ALL_STORES.join(',')), ALL_STORES)
  t.throws(() => testStores('sqlite,mongo'), /LECTERN_TEST_STORES: unknown store 'mongo'/)
})

t.test('withSearchPath keeps the options a URL already has', async t => {
  const url = withSearchPath('postgres://u:p@127.0.0.1:5432/db?options=-c%20statement_timeout%3D5000', 'lectern_ab')
  t.equal(new URL(url).searchParams.get('options'), '-c statement_timeout=5000 -c search_path=lectern_ab')
})

t.test('suiteDatabaseUrl: CMS_TEST_DATABASE_URL first; no server and no setting is a clear error', async t => {
  t.equal(suiteDatabaseUrl({ CMS_TEST_DATABASE_URL: 'postgres://elsewhere/db' }), 'postgres://elsewhere/db')
  t.throws(() => suiteDatabaseUrl({}, 0), /no PostgreSQL server for this run/)
})

t.test('clearStale removes the records of dead runners and keeps live ones', async t => {
  mkdirSync(RUN_DIR, { recursive: true })
  // A pid no process has: a finished child's.
  const dead = spawn(process.execPath, ['-e', ''])
  const deadPid = dead.pid ?? 0
  await new Promise(resolve => dead.once('exit', resolve))
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-pg-stale-'))
  writeFileSync(serverFile(deadPid), JSON.stringify({ runner: deadPid, supervisor: deadPid, dataDir }))
  const lonelyLog = path.join(RUN_DIR, `${deadPid + 1}.log`)
  writeFileSync(lonelyLog, '')
  const live = serverFile(process.pid)
  const liveDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-pg-live-'))
  writeFileSync(live, JSON.stringify({ runner: process.pid, supervisor: deadPid, dataDir: liveDir }))
  t.teardown(() => { clearStale(process.pid) })
  // -1: no runner is starting (this run's own record must stay).
  clearStale(-1)
  t.notOk(existsSync(serverFile(deadPid)), 'the dead run\'s record is gone')
  t.notOk(existsSync(dataDir), 'and its cluster directory')
  t.equal(existsSync(lonelyLog), isAlive(deadPid + 1), 'a log without a record goes when its runner is gone')
  t.ok(existsSync(live) && existsSync(liveDir), 'a live runner\'s record is kept, with its directory')
})

t.test('the supervisor stops its server and removes everything once its runner is gone', async t => {
  const runner = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'])
  t.teardown(() => { runner.kill('SIGKILL') })
  const runnerPid = runner.pid ?? 0
  const supervisor = spawn(process.execPath, [...TS_CHILD_ARGS, path.join(import.meta.dirname, 'postgres-server.ts'), String(runnerPid)], {
    env: TS_CHILD_ENV,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const supervisorExited = new Promise(resolve => supervisor.once('exit', resolve))
  t.teardown(() => { supervisor.kill('SIGKILL') })
  await new Promise(resolve => supervisor.once('message', resolve))
  const record = readServer(serverFile(runnerPid))
  t.ok(record?.url, 'the record names the server')
  const rows = await query<{ v: string }>(record?.url ?? '', "SELECT current_setting('max_connections') AS v")
  t.equal(rows[0]?.v, '400')
  runner.kill('SIGKILL')
  await supervisorExited
  t.notOk(isAlive(record?.supervisor ?? 0), 'the supervisor is gone')
  t.notOk(existsSync(record?.dataDir ?? ''), 'with its cluster')
  t.ok(await until(() => !existsSync(serverFile(runnerPid)), 1000), 'and its record')
  t.notOk(existsSync(path.join(RUN_DIR, `${runnerPid}.log`)), 'and its log')
  await t.rejects(query(record?.url ?? '', 'SELECT 1'), 'nothing answers on its port')
})
