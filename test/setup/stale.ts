// Records of runs whose tap runner is gone (killed, crashed, or a reused pid: a record named
// after the runner starting now is old by definition). Their supervisor normally stops its
// server when the runner goes; a supervisor killed itself leaves a server with no one to stop
// it, which this ends, with its directory, so stale servers never pile up run after run.
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { postmaster } from '../../bench/postgres.js'
import { RUN_DIR, readServer, type SuiteServer } from '../fixtures/postgres.js'
import { isAlive } from '../fixtures/processes.js'

/** Whether `pid` is alive and its command line names `needle` (Linux's /proc; elsewhere unknown, so no). */
export function runs (pid: number, needle: string): boolean {
  if (!isAlive(pid)) return false
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)
  } catch {
    return false
  }
}

/** Ends what a stale record left running (only processes that are verifiably its own) and removes its files. */
export function clearRecord (record: SuiteServer, file: string): void {
  if (runs(record.supervisor, 'postgres-server')) process.kill(record.supervisor, 'SIGKILL')
  const server = postmaster(record.dataDir)
  // SIGQUIT: immediate shutdown; the cluster is thrown away.
  if (runs(server, record.dataDir)) process.kill(server, 'SIGQUIT')
  rmSync(record.dataDir, { recursive: true, force: true })
  rmSync(file, { force: true })
  rmSync(file.replace(/\.json$/, '.log'), { force: true })
}

/** Clears every record in the run directory whose runner is gone or is `current` (this run's, which cannot have one yet). */
export function clearStale (current: number): number {
  let cleared = 0
  let names: string[]
  try {
    names = readdirSync(RUN_DIR)
  } catch {
    return 0
  }
  // A log without its record: the supervisor ended before writing one, or was ended after.
  for (const name of names.filter(n => n.endsWith('.log') && !names.includes(n.replace(/\.log$/, '.json')))) {
    const runner = Number.parseInt(name, 10)
    if (runner === current || !isAlive(runner)) rmSync(path.join(RUN_DIR, name), { force: true })
  }
  for (const name of names.filter(n => n.endsWith('.json'))) {
    const file = path.join(RUN_DIR, name)
    const record = readServer(file)
    if (record === null) {
      rmSync(file, { force: true })
      continue
    }
    if (record.runner !== current && isAlive(record.runner)) continue
    clearRecord(record, file)
    cleared++
  }
  return cleared
}
