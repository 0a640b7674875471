// Announcements between the server processes that share one database (contract §12): a content
// write, a schema write or an asset write on one replica is announced to every other, which drops
// what it cached. PostgreSQL carries them (postgres-bus.ts: LISTEN/NOTIFY, no extra service); a
// store that belongs to one process (SQLite, file: the data dir's lock) has nobody to tell
// (LocalBus).
//
// Delivery is at most once: a listening connection can be lost. So whoever caches must also
// listen for `resync`, which says announcements may have been missed (the connection is back),
// and drop or re-read everything it holds.

/** The topic of content writes: the store announces each from inside its transaction (seq, environment, locale, collection, slug). */
export const CONTENT_TOPIC = 'content'
/** The topic of schema writes (the types directory is shared). */
export const SCHEMA_TOPIC = 'schema'
/** The topic of asset uploads and deletes (environment, record path): the files and records are shared, caches are not. */
export const ASSET_TOPIC = 'asset'

/** What one process announces: a topic and a small JSON object (PostgreSQL caps a payload near 8,000 bytes). */
export interface BusMessage {
  topic: string
  data: Record<string, unknown>
}

export interface ClusterBus {
  /** This process's mark on what it announces (a store announcing inside its transactions uses it too). */
  readonly origin: string
  /** Whether announcements from other processes can arrive now (always true for LocalBus). */
  readonly listening: boolean
  /** Tells every other process; never this one, which acts on its own writes as it makes them. */
  publish: (topic: string, data: Record<string, unknown>) => Promise<void>
  /** Calls `listener` with each announcement of another process; returns the unsubscribe. */
  subscribe: (listener: (message: BusMessage) => void) => () => void
  /** Calls `listener` when announcements may have been missed (after a lost connection came back). */
  onResync: (listener: () => void) => () => void
  /** Calls `listener` when announcements stop arriving (the listening connection is lost), until `resync`. */
  onLost: (listener: () => void) => () => void
  close: () => Promise<void>
}

/** One process alone on its data: nothing to announce, nothing to hear. */
export class LocalBus implements ClusterBus {
  readonly origin: string = 'local'
  readonly listening = true
  async publish (): Promise<void> {}
  subscribe (): () => void {
    return () => {}
  }

  onResync (): () => void {
    return () => {}
  }

  onLost (): () => void {
    return () => {}
  }

  async close (): Promise<void> {}
}

/** A set of listeners, each called in turn; one that throws is reported, and the others still run. */
export class Listeners<A extends unknown[]> {
  private readonly set = new Set<(...args: A) => void>()

  constructor (private readonly onError: (err: unknown) => void) {}

  add (listener: (...args: A) => void): () => void {
    this.set.add(listener)
    return () => { this.set.delete(listener) }
  }

  call (...args: A): void {
    for (const listener of this.set) {
      try {
        listener(...args)
      } catch (err) {
        this.onError(err)
      }
    }
  }
}
