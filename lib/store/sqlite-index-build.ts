// Index builds of the SQLite store off the main thread (issue 28 item 14). better-sqlite3 is
// synchronous: a CREATE INDEX over 30,000 rows on the store's own connection held the event loop
// for 0.6 s, and every request with it. A worker thread (sqlite-index-worker.ts) builds them on
// its own connection instead, in one IMMEDIATE transaction; the store's connection keeps serving
// reads from the committed state (WAL), and holds its writes in their queue until the build is
// over (a write would otherwise block the event loop in SQLite's busy wait).
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

export interface IndexJob {
  /** The database file. */
  file: string
  /** Index names to drop, then CREATE INDEX statements to run. */
  drop: string[]
  create: string[]
  /** Gather the planner's statistics afterwards (sqlite-connection.ts analyze). */
  analyze: boolean
  busyTimeoutMs: number
}

/** The worker's module beside this one: `.ts` when run from the sources, `.js` when built. */
const WORKER_URL = new URL(`./sqlite-index-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/** Runs `job` in a worker thread; rejects with the database's error when the build failed (nothing of it is kept). */
export async function buildIndexes (job: IndexJob): Promise<void> {
  const worker = new Worker(WORKER_URL, { workerData: job })
  try {
    const reply = await new Promise<{ ok: boolean, message?: string, code?: unknown }>((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
      worker.once('exit', code => { reject(new Error(`the index build thread exited with code ${code}`)) })
    })
    if (!reply.ok) throw Object.assign(new Error(reply.message), { code: reply.code })
  } finally {
    await worker.terminate()
  }
}
