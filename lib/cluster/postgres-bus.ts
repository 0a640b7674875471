// The cluster bus over PostgreSQL (bus.ts): one listening connection per process (LISTEN on a
// channel named after the database schema, so several Lecterns can share a database in separate
// schemas), announcements sent with pg_notify, which the database delivers to every listener when
// the sending transaction commits. A store that announces its writes inside their own transaction
// (so an announcement goes out exactly when the write becomes visible) sends `payload(...)` to
// `channel` itself.
//
// A lost listening connection (database restarted, network cut: the connection ends, errors, or a
// periodic check gets no answer) is retried with backoff until it is back; then `resync` tells
// every cache that announcements may have been missed meanwhile.
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { Listeners, type BusMessage, type ClusterBus } from './bus.js'

/** The subset of a pino logger the bus reports to. */
export interface BusLogger {
  info: (obj: object, msg: string) => void
  warn: (obj: object, msg: string) => void
}

export interface PostgresBusOptions {
  /** How to reach the database (a connection string, or pg's client settings). */
  connection: pg.ClientConfig
  log: BusLogger
  /** How often the listening connection is checked, and how long an answer may take (ms). */
  checkEveryMs?: number
  checkTimeoutMs?: number
  /** The first and the longest wait before connecting again (ms); each failure doubles it. */
  retryMinMs?: number
  retryMaxMs?: number
}

/**
 * The channel of the connection's schema, as SQL: an identifier of its own whatever the schema's
 * name. The store sends its writes' announcements on it from inside their transactions.
 */
export const CHANNEL_SQL = "'lectern_' || left(md5(current_schema()), 16)"

/** A notification's text: who sent it (skipped by its sender), the topic and the data. */
export function payload (origin: string, topic: string, data: Record<string, unknown>): string {
  return JSON.stringify({ o: origin, t: topic, d: data })
}

/** A notification's message when it is well formed and from another process, else null. */
export function parsePayload (text: string | undefined, origin: string): BusMessage | null {
  if (text === undefined) return null
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  if (value === null || typeof value !== 'object') return null
  const { o, t, d } = value as Record<string, unknown>
  if (o === origin || typeof t !== 'string' || d === null || typeof d !== 'object' || Array.isArray(d)) return null
  return { topic: t, data: d as Record<string, unknown> }
}

export class PostgresBus implements ClusterBus {
  /** This process's mark on what it sends, so it skips its own announcements. */
  readonly origin = randomUUID()
  private client: pg.Client | null = null
  private channelName: string | null = null
  private closed = false
  private retryTimer: NodeJS.Timeout | null = null
  private checkTimer: NodeJS.Timeout | null = null
  /** A check of the listening connection is under way (check). */
  private checking = false
  /** The last statement sent on the listening connection, settled (inTurn). */
  private turn: Promise<unknown> = Promise.resolve()
  private retryMs: number
  private readonly messages: Listeners<[BusMessage]>
  private readonly resyncs: Listeners<[]>
  private readonly losses: Listeners<[]>

  constructor (private readonly options: PostgresBusOptions) {
    this.retryMs = options.retryMinMs ?? 100
    const onError = (err: unknown): void => { options.log.warn({ err }, 'a cluster bus listener failed') }
    this.messages = new Listeners(onError)
    this.resyncs = new Listeners(onError)
    this.losses = new Listeners(onError)
  }

  get listening (): boolean {
    return this.client !== null
  }

  /** The channel of this database schema (known once started). */
  get channel (): string {
    if (this.channelName === null) throw new Error('the cluster bus is not started')
    return this.channelName
  }

  /** Connects and listens; rejects when the database cannot be reached now. */
  async start (): Promise<void> {
    await this.connect()
  }

  async publish (topic: string, data: Record<string, unknown>): Promise<void> {
    const client = this.client
    if (client === null) throw new Error('the cluster bus is not connected')
    await this.inTurn(async () => await client.query('SELECT pg_notify($1, $2)', [this.channel, payload(this.origin, topic, data)]))
  }

  /**
   * `work` on the listening connection once the statements sent before it are answered: one at a
   * time, as node-postgres wants of a connection without pipelining (it deprecates queueing).
   */
  private async inTurn<T> (work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work)
    this.turn = run.catch(() => {})
    return await run
  }

  subscribe (listener: (message: BusMessage) => void): () => void {
    return this.messages.add(listener)
  }

  onResync (listener: () => void): () => void {
    return this.resyncs.add(listener)
  }

  onLost (listener: () => void): () => void {
    return this.losses.add(listener)
  }

  async close (): Promise<void> {
    this.closed = true
    if (this.retryTimer !== null) clearTimeout(this.retryTimer)
    if (this.checkTimer !== null) clearInterval(this.checkTimer)
    const client = this.client
    this.client = null
    await client?.end().catch(() => {})
  }

  private async connect (): Promise<void> {
    const client = new pg.Client(this.options.connection)
    client.on('error', err => { this.lost(client, err) })
    client.on('end', () => { this.lost(client, null) })
    client.on('notification', n => {
      const message = parsePayload(n.payload, this.origin)
      if (message !== null) this.messages.call(message)
    })
    try {
      await client.connect()
      const channel = (await client.query<{ channel: string | null }>(`SELECT ${CHANNEL_SQL} AS channel`)).rows[0]?.channel ?? null
      if (channel === null) throw new Error('the database connection has no current schema: check search_path')
      this.channelName = channel
      // The channel is made here from a hash, never from input: safe to write into the statement.
      await client.query(`LISTEN ${this.channelName}`)
    } catch (err) {
      client.removeAllListeners('end')
      await client.end().catch(() => {})
      throw err
    }
    if (this.closed) {
      await client.end().catch(() => {})
      return
    }
    this.client = client
    // A new connection owes no answers: nothing sent on a lost one holds it up.
    this.turn = Promise.resolve()
    this.checkTimer ??= setInterval(() => { void this.check() }, this.options.checkEveryMs ?? 5000).unref()
  }

  /** A listening connection that gives no answer in time is as good as lost (a cut network ends nothing). */
  private async check (): Promise<void> {
    const client = this.client
    // One check at a time: a connection still owing the last answer gets no second query queued
    // behind it (node-postgres deprecates that); the pending check's timeout decides.
    if (client === null || this.checking) return
    this.checking = true
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new Error('the listening connection did not answer in time')) }, this.options.checkTimeoutMs ?? 3000)
    })
    try {
      await Promise.race([this.inTurn(async () => await client.query('SELECT 1')), timeout])
    } catch (err) {
      this.lost(client, err)
    } finally {
      clearTimeout(timer)
      this.checking = false
    }
  }

  private lost (client: pg.Client, err: unknown): void {
    if (this.client !== client) return
    this.client = null
    client.removeAllListeners('end')
    void client.end().catch(() => {})
    if (this.closed) return
    this.options.log.warn({ err }, 'cluster bus: the listening connection is lost; connecting again')
    this.losses.call()
    this.retry()
  }

  private retry (): void {
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null
      this.connect().then(() => {
        this.retryMs = this.options.retryMinMs ?? 100
        if (this.closed) return
        this.options.log.info({}, 'cluster bus: listening again; caches are dropped, announcements may have been missed')
        this.resyncs.call()
      }, () => {
        this.retryMs = Math.min(this.retryMs * 2, this.options.retryMaxMs ?? 5000)
        if (!this.closed) this.retry()
      })
    }, this.retryMs)
  }
}
