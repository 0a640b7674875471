// tap's `after` program (.taprc): stops this run's PostgreSQL server (test/setup/before.ts) and
// waits until its supervisor is gone, so the run ends with nothing left behind.
import { readServer, serverFile } from '../fixtures/postgres.js'
import { isAlive } from '../fixtures/processes.js'
import { clearRecord } from './stale.js'

const STOP_TIMEOUT_MS = 15_000

const file = serverFile(process.ppid)
const record = readServer(file)
if (record !== null) {
  const began = Date.now()
  if (isAlive(record.supervisor)) process.kill(record.supervisor, 'SIGTERM')
  // Not a child of this script: no exit event to wait on, so its pid is polled.
  while (isAlive(record.supervisor) && Date.now() - began < STOP_TIMEOUT_MS) {
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  // One that did not stop in time (or files it left): ended and removed as a stale one would be.
  clearRecord(record, file)
  process.stderr.write(`postgres: suite server stopped in ${Date.now() - began} ms\n`)
}
