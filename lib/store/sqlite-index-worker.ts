// The worker thread of sqlite-index-build.ts: builds (and drops) a collection's expression
// indexes on its own connection to the database, so the store's connection keeps answering reads
// meanwhile (WAL: readers never wait for a writer).
import { parentPort, workerData } from 'node:worker_threads'
import Database from '../sqlite-driver.js'
import { analyze, registerFunctions } from './sqlite-connection.js'
import type { IndexJob } from './sqlite-index-build.js'

function run (job: IndexJob): void {
  const db = new Database(job.file)
  try {
    // The store's connection writes between builds only, briefly; waiting for it is this thread's time.
    db.pragma(`busy_timeout = ${job.busyTimeoutMs}`)
    db.pragma('synchronous = FULL')
    registerFunctions(db)
    db.transaction(() => {
      for (const name of job.drop) db.exec(`DROP INDEX IF EXISTS "${name}"`)
      for (const sql of job.create) db.exec(sql)
    }).immediate()
    if (job.analyze) analyze(db, 'entries')
  } finally {
    db.close()
  }
}

try {
  run(workerData as IndexJob)
  parentPort?.postMessage({ ok: true })
} catch (err) {
  parentPort?.postMessage({ ok: false, message: String((err as Error).message), code: (err as { code?: unknown }).code })
}
