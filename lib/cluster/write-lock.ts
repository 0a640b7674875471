// A lock held by one process at a time among every process sharing the database (contract §12:
// schema writes serialized across replicas). A transaction-level advisory lock on one of the
// store's pooled connections, keyed by a name and the schema (so Lecterns in separate schemas of
// one database do not wait for each other), released when the transaction ends, whatever the
// task did: a process that dies while holding it loses its connection, and the lock with it.
import type { PostgresStore } from '../store/postgres.js'

/** What the lock needs of the store: a transaction on its pool. */
export type LockDatabase = Pick<PostgresStore, 'transaction'>

export class AdvisoryLock {
  constructor (private readonly db: LockDatabase, private readonly name: string) {}

  /** Runs `task` holding the lock; waits while another process holds it. */
  async run<T> (task: () => Promise<T>): Promise<T> {
    return await this.db.transaction(async client => {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1 || current_schema(), 0))', [`lectern:${this.name}:`])
      return await task()
    })
  }
}
