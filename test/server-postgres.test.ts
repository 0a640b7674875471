// The real process with CMS_STORE=postgres (contract §12): its settings refused in one line that
// never shows the password, and two servers on one database and one data dir (no lock), on the
// suite's PostgreSQL server (test/setup/before.ts).
import path from 'node:path'
import t from 'tap'
import { createStore } from '../lib/store/index.js'
import { freePort, startServer, storeEnv, tempDir, waitForHealth, type Env, type ServerProcess } from './helper.js'
import type { Test } from 'tap'

const PASSWORD = 'hunter2-not-in-logs'

t.test('CMS_STORE=postgres without CMS_DATABASE_URL stops start-up with one line', async t => {
  const { exited, output } = startServer({ CMS_STORE: 'postgres', CMS_DATA_DIR: path.join(tempDir(t), 'data') })
  t.equal(await exited, 1)
  t.match(output().trim(), /^lectern: invalid setting CMS_DATABASE_URL: is required with CMS_STORE=postgres \(expected postgres:\/\/user:password@host:port\/database\)$/)
})

t.test('an unparsable CMS_DATABASE_URL is refused without echoing it', async t => {
  const { exited, output } = startServer({
    CMS_STORE: 'postgres',
    CMS_DATABASE_URL: `postgres://lectern:${PASSWORD}@db:port/lectern`,
    CMS_DATA_DIR: path.join(tempDir(t), 'data')
  })
  t.equal(await exited, 1)
  t.match(output().trim(), /^lectern: invalid setting CMS_DATABASE_URL: is not a valid URL/)
  t.notMatch(output(), PASSWORD, 'the password is not in the output')
  t.notMatch(output(), /\n.*\n/, 'one line')
})

/** Why the servers below cannot run yet, or undefined once the PostgreSQL store is in this build. */
function storeMissing (): string | undefined {
  try {
    createStore('postgres', { dataDir: tempDir(t), databaseUrl: 'postgres://u:p@127.0.0.1:1/x' })
    return undefined
  } catch (err) {
    // Only the build's refusal counts; any other error makes the test run, and fail.
    if (!/not available in this build/.test((err as Error).message)) return undefined
    return 'the PostgreSQL store (lib/store/postgres.ts, issue 23 part 1) is not in this build: createStore(\'postgres\') refuses'
  }
}

async function started (t: Test, env: Env): Promise<{ server: ServerProcess, base: string }> {
  const port = await freePort()
  const server = startServer({ ...env, CMS_PORT: String(port), CMS_HOST: '127.0.0.1' })
  t.teardown(() => { if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL') })
  await waitForHealth(t, port, server.exited)
  return { server, base: `http://127.0.0.1:${port}` }
}

const todo = storeMissing()
t.test('two servers on one database and one data dir: both start, each sees the other\'s writes', { todo }, async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const env: Env = { ...await storeEnv(t, 'postgres', dataDir), CMS_DATA_DIR: dataDir, CMS_SEED: 'true' }
  const a = await started(t, env)
  const b = await started(t, env)
  const seeded = await fetch(`${b.base}/api/content/post/hello-world`)
  t.equal(seeded.status, 200, 'the samples seeded by the first are read by the second')
  const created = await fetch(`${a.base}/api/content/author`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ _slug: 'grace-hopper', name: 'Grace Hopper' })
  })
  t.equal(created.status, 201)
  t.equal((await fetch(`${b.base}/api/content/author/grace-hopper`)).status, 200, 'a write on one is read on the other')
  const password = new URL(env.CMS_DATABASE_URL ?? '').password
  for (const { server } of [a, b]) {
    server.child.kill('SIGTERM')
    t.equal(await server.exited, 0, 'a clean stop')
    if (password !== '') t.notOk(server.output().includes(password), 'the database password is never logged')
  }
})
