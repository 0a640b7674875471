// tap's `before` program (.taprc): starts the run's PostgreSQL server before any test file, as a
// detached supervised process (test/setup/postgres-server.ts) that outlives this script, and
// returns once it accepts connections. CMS_TEST_DATABASE_URL set: that server is used, none starts.
import { spawn } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { RUN_DIR } from '../fixtures/postgres.js'
import { TS_CHILD_ARGS } from '../fixtures/processes.js'
import { clearStale } from './stale.js'

const READY_TIMEOUT_MS = 60_000
// The supervisor needs the TypeScript loader only (test/ts-loader.mjs): not tap's coverage or mock
// hooks (it is no program code, and each hook costs a part of a second at start).
const LOADER_ARGS = TS_CHILD_ARGS.filter(a => a.includes('ts-loader.mjs'))

async function start (runner: number): Promise<void> {
  mkdirSync(RUN_DIR, { recursive: true })
  const log = path.join(RUN_DIR, `${runner}.log`)
  const out = openSync(log, 'w')
  // Detached, its own process group: a Ctrl-C on the run reaches the runner, whose end the
  // supervisor notices; the server never stops under a test that is still finishing.
  const child = spawn(process.execPath, [...LOADER_ARGS, path.join(import.meta.dirname, 'postgres-server.ts'), String(runner)], {
    detached: true,
    stdio: ['ignore', out, out, 'ipc']
  })
  closeSync(out)
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`not ready after ${READY_TIMEOUT_MS} ms`)) }, READY_TIMEOUT_MS)
      child.once('message', () => { clearTimeout(timer); resolve() })
      child.once('exit', code => { clearTimeout(timer); reject(new Error(`the supervisor exited with ${String(code)}`)) })
    })
  } catch (err) {
    child.kill('SIGKILL')
    throw new Error(`PostgreSQL for the tests did not start (${(err as Error).message}): ${readFileSync(log, 'utf8').slice(-2000)}`)
  }
  child.disconnect()
  child.unref()
}

if (process.env.CMS_TEST_DATABASE_URL === undefined || process.env.CMS_TEST_DATABASE_URL === '') {
  const began = Date.now()
  clearStale(process.ppid)
  await start(process.ppid)
  process.stderr.write(`postgres: suite server ready in ${Date.now() - began} ms\n`)
}
