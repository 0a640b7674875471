// The webhook service: records every event as one delivery per URL in the outbox (inside the
// event listener, so before the API reply), then delivers from the outbox in the background.
//
// Memory stays bounded whatever the rate of events: the queue is the outbox on disk, and the
// worker holds at most `concurrency` attempts, fetches due rows a page at a time and sleeps on
// one timer until the next due time. Deliveries to one URL are not ordered: a retry may arrive
// after a later event; receivers order by `timestamp` and deduplicate by `id`.
import { randomUUID } from 'node:crypto'
import { Agent } from 'undici'
import type { CmsEvent, EventName } from '../../types/events.js'
import { pageParameter, perPageParameter } from '../query/parse.js'
import { afterParameter, encodeAfter, listFingerprint, type KeyKind } from '../query/keyset.js'
import { Outbox, SqliteOutboxStore, type AttemptRecord, type DeliveryRecord, type DeliveryStatus, type DueDelivery, type OutboxStore } from './outbox.js'
import { buildPayload } from './payload.js'
import { replayedEvent, unannounced, type ChangeSource } from './replay.js'
import { ATTEMPT_TIMEOUT_MS, MAX_ATTEMPTS, retryDelay, type AttemptOutcome } from './retry.js'
import { attemptDelivery } from './send.js'

/** The subset of a pino logger the service uses. */
export interface WebhookLogger {
  debug: (obj: object, msg: string) => void
  info: (obj: object, msg: string) => void
  warn: (obj: object, msg: string) => void
  error: (obj: object, msg: string) => void
}

export interface WebhookServiceOptions {
  /** The receivers (CMS_WEBHOOKS). None: the service records and opens nothing. */
  urls: readonly string[]
  /** CMS_WEBHOOK_SECRET, or null. */
  secret: string | null
  /** Base of the retry back-off (CMS_WEBHOOK_BACKOFF_MS). */
  backoffMs: number
  /** The outbox database file (<dataDir>/outbox.db), unless `outbox` is given. */
  outboxFile: string
  /** The outbox, when not the SQLite file (PostgreSQL's, shared by replicas: postgres-outbox.ts). */
  outbox?: OutboxStore
  maxAttempts?: number
  timeoutMs?: number
  /** Attempts in flight at once, over all URLs. */
  concurrency?: number
  /** How long close() waits for attempts in flight before leaving them pending. */
  graceMs?: number
  /** Finished deliveries kept for the history. */
  keepFinished?: number
  /** Content events recorded between two moves of the announced floor (1000). */
  compactEvery?: number
  logger?: WebhookLogger
  now?: () => number
  random?: () => number
}

/** A delivery as GET /api/webhooks/deliveries shows it. */
export interface DeliveryView {
  id: string
  event: EventName
  url: string
  status: DeliveryStatus
  attempts: number
  last_status: number | null
  last_error: string | null
  created_at: string
  updated_at: string
  next_attempt_at: string | null
}

export interface DeliveryPage {
  items: DeliveryView[]
  total: number
  /** null on a keyset page (`_after`). */
  page: number | null
  per_page: number
  pages: number
  /** The cursor of the page after this one (contract §10), null on the last page. */
  next: string | null
}

export interface DeliveryQuery {
  status?: DeliveryStatus | undefined
  /** As numbers, or as the query string has them (checked as every list checks them). */
  page?: number | string | undefined
  perPage?: number | string | undefined
  /** `_after`: the `next` of an earlier answer of the same query. */
  after?: string | undefined
}

/** A delivery's position in the history's order (newest first): its seq. */
const POSITION_KINDS: readonly KeyKind[] = ['integer']

const DEFAULT_CONCURRENCY = 8
const DEFAULT_GRACE_MS = 2000
const DEFAULT_KEEP_FINISHED = 1000
/** Finished deliveries between two prunes of the history. */
const PRUNE_EVERY = 100
/** After an outbox error in the worker, the next try. */
const ERROR_PAUSE_MS = 5000
/** Content events recorded between two moves of the announced floor (which bounds the seqs kept). */
const COMPACT_EVERY = 1000
/** setTimeout's largest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1

const silent: WebhookLogger = { debug () {}, info () {}, warn () {}, error () {} }

/** A delivery as the history shows it. */
function deliveryView (d: DeliveryRecord): DeliveryView {
  return {
    id: d.id,
    event: d.event,
    url: displayUrl(d.url),
    status: d.status,
    attempts: d.attempts,
    last_status: d.lastStatus,
    last_error: d.lastError,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
    next_attempt_at: d.nextAttemptAt === null ? null : new Date(d.nextAttemptAt).toISOString()
  }
}

/** The URL as it may be shown or logged: credentials in it are masked. */
export function displayUrl (url: string): string {
  try {
    const u = new URL(url)
    if (u.username === '' && u.password === '') return url
    if (u.username !== '') u.username = '***'
    if (u.password !== '') u.password = '***'
    return u.href
  } catch {
    return url
  }
}

type State = 'idle' | 'running' | 'stopping' | 'closed'

export class WebhookService {
  readonly enabled: boolean
  private readonly urls: readonly string[]
  private readonly secret: string | null
  private readonly backoffMs: number
  private readonly maxAttempts: number
  private readonly timeoutMs: number
  private readonly concurrency: number
  private readonly graceMs: number
  private readonly keepFinished: number
  private readonly compactEvery: number
  private readonly log: WebhookLogger
  private readonly now: () => number
  private readonly random: () => number
  private readonly outbox: OutboxStore | null
  private readonly agent: Agent | null
  private readonly shutdown = new AbortController()
  private readonly inFlight = new Map<string, Promise<void>>()
  private timer: NodeJS.Timeout | null = null
  private pumpQueued = false
  private finishedSincePrune = 0
  private state: State = 'idle'
  private closing: Promise<void> | null = null
  private changes: ChangeSource | null = null
  private recordedSinceCompaction = 0
  private compacting: Promise<void> | null = null
  /** Records not yet durable: a reply waits for them (`recorded`), and close too. */
  private readonly recording = new Set<Promise<unknown>>()
  private pumping = false
  private pumpAgain = false

  constructor (options: WebhookServiceOptions) {
    // A URL listed twice is notified once.
    this.urls = [...new Set(options.urls)]
    this.enabled = this.urls.length > 0
    this.secret = options.secret
    this.backoffMs = options.backoffMs
    this.maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS
    this.timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS
    this.keepFinished = options.keepFinished ?? DEFAULT_KEEP_FINISHED
    this.compactEvery = options.compactEvery ?? COMPACT_EVERY
    this.log = options.logger ?? silent
    this.now = options.now ?? Date.now
    this.random = options.random ?? Math.random
    this.outbox = this.enabled ? options.outbox ?? new SqliteOutboxStore(new Outbox(options.outboxFile)) : null
    this.agent = this.enabled
      ? new Agent({
        connections: this.concurrency,
        connect: { timeout: this.timeoutMs },
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        keepAliveTimeout: 4000
      })
      : null
  }

  /**
   * Starts delivering: every pending delivery is resumed (at its scheduled time). Pending
   * deliveries to a URL no longer configured are marked failed rather than sent.
   */
  async start (): Promise<void> {
    if (this.outbox === null || this.state !== 'idle') return
    this.state = 'running'
    const abandoned = await this.outbox.abandonExcept(this.urls, 'webhook URL no longer configured', this.now())
    if (abandoned > 0) this.log.warn({ abandoned }, 'webhook deliveries to URLs no longer configured marked failed')
    await this.outbox.prune(this.keepFinished)
    this.pump()
  }

  /**
   * Records one delivery per URL for `event`, in one transaction, durable when it resolves (with
   * SQLite, already when it returns: the bus calls it before the route sends its reply; with
   * PostgreSQL the reply waits for `recorded`). Throws at once when closed.
   */
  record (event: CmsEvent, onRecorded?: () => void): Promise<void> {
    if (this.outbox === null) return Promise.resolve()
    if (this.state === 'closed') throw new Error(`webhook outbox closed: ${event.event} not recorded`)
    const now = this.now()
    const timestamp = new Date(now).toISOString()
    const deliveries = this.urls.map(url => {
      const id = randomUUID()
      return { id, event: event.event, url, body: JSON.stringify(buildPayload(event, id, timestamp)) }
    })
    const seq = 'seq' in event ? event.seq : null
    const done = this.outbox.enqueue(deliveries, now, seq).then(recorded => {
      if (!recorded) return
      onRecorded?.()
      if (seq !== null && ++this.recordedSinceCompaction >= this.compactEvery) this.scheduleCompaction()
      this.wake()
    })
    this.recording.add(done)
    void done.then(() => { this.recording.delete(done) }, () => { this.recording.delete(done) })
    return done
  }

  /** Resolves once every event recorded so far is durable (or failed); a reply waits for it. */
  async recorded (): Promise<void> {
    while (this.recording.size > 0) await Promise.allSettled([...this.recording])
  }

  /** Whether some record is not durable yet (the reply hook's fast path). */
  get recordingCount (): number {
    return this.recording.size
  }

  /**
   * At start, before `start`: records the events of every change the log holds that the outbox
   * never recorded (a crash between a write and its event), then moves the floor past them.
   * An outbox without a floor (new, or from a version without one) starts at the log's latest
   * seq: changes made before webhooks were configured are not announced. Returns how many.
   */
  async catchUp (source: ChangeSource): Promise<number> {
    const outbox = this.outbox
    if (outbox === null) return 0
    this.changes = source
    const floor = await outbox.announcedFloor()
    if (floor === null) {
      await outbox.advanceFloor(await source.log.latestSeq())
      return 0
    }
    const announced = await outbox.announcedAbove(floor)
    const { missing } = await unannounced(source, floor, seq => announced.has(seq))
    // With a shared outbox a missing change may be one another replica is recording right now:
    // the outbox records a seq once (its unique row, in the transaction of its deliveries), so
    // whichever of the two comes second records nothing, and the change is announced once.
    let replayed = 0
    for (const record of missing) if (await this.recordOnce(await replayedEvent(source, record))) replayed++
    if (replayed > 0) this.log.warn({ count: replayed }, 'announced content changes that a crash left stored but unrecorded')
    await this.compactAnnounced()
    return replayed
  }

  /** `record`, telling whether the outbox took the event (false: its change was recorded already). */
  private async recordOnce (event: CmsEvent): Promise<boolean> {
    let taken = false
    await this.record(event, () => { taken = true })
    return taken
  }

  /** Moves the floor up to the first change not yet recorded, so the outbox keeps few seqs. */
  private async compactAnnounced (): Promise<void> {
    const outbox = this.outbox
    if (this.changes === null || outbox === null) return
    const from = await outbox.announcedFloor() ?? 0
    const announced = await outbox.announcedAbove(from)
    const { floor } = await unannounced(this.changes, from, seq => announced.has(seq))
    if (outbox.open) await outbox.advanceFloor(floor)
  }

  private scheduleCompaction (): void {
    if (this.compacting !== null || this.state !== 'running') return
    this.recordedSinceCompaction = 0
    this.compacting = this.compactAnnounced()
      .catch((err: unknown) => { this.log.warn({ err }, 'could not move the announced floor of the webhook outbox') })
      .finally(() => { this.compacting = null })
  }

  /**
   * The history, newest first: numbered pages, or keyset pages after a delivery (`_after`,
   * contract §10), which new deliveries and prunes do not shift. Without webhooks configured it is empty.
   */
  async deliveries (query: DeliveryQuery): Promise<DeliveryPage> {
    const page = pageParameter(query.page)
    const perPage = perPageParameter(query.perPage)
    const status = query.status ?? null
    const fingerprint = listFingerprint(['webhooks/deliveries', status])
    const after = afterParameter(query.after, query.page, fingerprint, POSITION_KINDS)
    const from = after === null ? { offset: (page - 1) * perPage } : { afterSeq: after.keys[0] as number }
    // One more than the page tells whether any delivery follows it.
    const { items, total } = this.outbox === null || !this.outbox.open
      ? { items: [], total: 0 }
      : await this.outbox.list(status, perPage + 1, from)
    const more = items.length > perPage
    if (more) items.pop()
    const last = items.at(-1)
    return {
      items: items.map(deliveryView),
      total,
      page: after === null ? page : null,
      per_page: perPage,
      pages: Math.ceil(total / perPage),
      next: more && last !== undefined ? encodeAfter(fingerprint, { keys: [last.seq], slug: last.id }) : null
    }
  }

  /** Attempts in flight now (for tests and diagnostics). */
  get inFlightCount (): number {
    return this.inFlight.size
  }

  /**
   * Stops scheduling, waits up to `graceMs` for attempts in flight, aborts the rest (they stay
   * pending, their attempt not counted) and closes the agent and the outbox.
   */
  async close (): Promise<void> {
    this.closing ??= this.stop()
    return await this.closing
  }

  private async stop (): Promise<void> {
    this.state = 'stopping'
    this.clearTimer()
    await this.recorded()
    await this.compacting
    if (this.inFlight.size > 0) {
      let grace: NodeJS.Timeout | undefined
      await Promise.race([
        Promise.allSettled([...this.inFlight.values()]),
        new Promise<void>(resolve => { grace = setTimeout(resolve, this.graceMs) })
      ])
      clearTimeout(grace)
      if (this.inFlight.size > 0) this.log.info({ left: this.inFlight.size }, 'webhook attempts still in flight at shutdown stay pending')
    }
    this.state = 'closed'
    this.shutdown.abort()
    if (this.agent !== null) await this.agent.destroy()
    this.outbox?.close()
  }

  /** Runs the worker soon (once, however many events arrive in the same tick). */
  private wake (): void {
    if (this.pumpQueued || this.state !== 'running') return
    this.pumpQueued = true
    setImmediate(() => {
      this.pumpQueued = false
      this.pump()
    })
  }

  /** Runs `fill`, once at a time: a call while it runs makes it run again after. */
  private pump (): void {
    if (this.state !== 'running' || this.outbox === null) return
    if (this.pumping) {
      this.pumpAgain = true
      return
    }
    this.pumping = true
    this.clearTimer()
    void this.fill().finally(() => {
      this.pumping = false
      if (this.pumpAgain) {
        this.pumpAgain = false
        this.pump()
      }
    })
  }

  /** Fills the free attempt slots with due deliveries, then sleeps until the next due time. */
  private async fill (): Promise<void> {
    const outbox = this.outbox
    if (outbox === null) return
    try {
      const free = this.concurrency - this.inFlight.size
      if (free > 0) {
        for (const delivery of await outbox.due(this.now(), free, [...this.inFlight.keys()])) this.launch(delivery)
      }
      // With every slot busy, the end of an attempt wakes the worker instead of a timer. A shared
      // outbox is looked at every sharedPollMs too: a replica that died may have left work.
      if (this.state === 'running' && this.inFlight.size < this.concurrency) {
        const next = await outbox.nextDueAt([...this.inFlight.keys()])
        const wait = next === null ? Infinity : next - this.now()
        const poll = outbox.sharedPollMs ?? Infinity
        if (Number.isFinite(Math.min(wait, poll))) this.sleep(Math.min(wait, poll))
      }
    } catch (err) {
      this.log.error({ err }, 'webhook outbox error; retrying shortly')
      if (this.state === 'running') this.sleep(ERROR_PAUSE_MS)
    }
  }

  private sleep (ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null
      this.pump()
    }, Math.min(Math.max(ms, 0), MAX_TIMER_MS))
    // The timer alone never keeps the process alive.
    this.timer.unref()
  }

  private clearTimer (): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
  }

  private launch (delivery: DueDelivery): void {
    const done = this.deliver(delivery)
      .catch((err: unknown) => { this.log.error({ err, id: delivery.id }, 'webhook delivery bookkeeping failed') })
      .finally(() => {
        this.inFlight.delete(delivery.id)
        this.wake()
      })
    this.inFlight.set(delivery.id, done)
  }

  private async deliver (delivery: DueDelivery): Promise<void> {
    if (this.agent === null) return
    const outcome = await attemptDelivery(delivery, {
      dispatcher: this.agent,
      secret: this.secret,
      timeoutMs: this.timeoutMs,
      signal: this.shutdown.signal,
      now: this.now
    })
    // Cut short by shutdown: not an attempt; the delivery stays pending for the next start.
    if (this.shutdown.signal.aborted || this.outbox === null || !this.outbox.open) return
    const attempts = delivery.attempts + 1
    // One clock reading: the next attempt is exactly its delay after the record's updated_at.
    const now = this.now()
    const result = this.resultOf(outcome, attempts, now)
    await this.outbox.recordAttempt(delivery.id, result, now)

    const context = { id: delivery.id, event: delivery.event, url: displayUrl(delivery.url), attempts, status: result.lastStatus }
    if (result.status === 'delivered') this.log.debug(context, 'webhook delivered')
    else if (result.status === 'failed') this.log.warn({ ...context, error: result.lastError }, 'webhook delivery failed')
    // Retries are routine (and many when a receiver is down): the history shows them.
    else this.log.debug({ ...context, error: result.lastError, next_attempt_at: new Date(result.nextAttemptAt ?? 0).toISOString() }, 'webhook delivery will be retried')

    if (result.status !== 'pending' && ++this.finishedSincePrune >= PRUNE_EVERY) {
      this.finishedSincePrune = 0
      await this.outbox.prune(this.keepFinished)
    }
  }

  private resultOf (outcome: AttemptOutcome, attempts: number, now: number): AttemptRecord {
    switch (outcome.kind) {
      case 'delivered':
        return { status: 'delivered', lastStatus: outcome.status, lastError: null, nextAttemptAt: null }
      case 'failed':
        return { status: 'failed', lastStatus: outcome.status, lastError: this.redact(outcome.error), nextAttemptAt: null }
      case 'retry': {
        const error = this.redact(outcome.error)
        if (attempts >= this.maxAttempts) {
          return { status: 'failed', lastStatus: outcome.status, lastError: `${error} (gave up after ${attempts} attempts)`, nextAttemptAt: null }
        }
        const delay = retryDelay(outcome, attempts, this.backoffMs, this.random)
        return { status: 'pending', lastStatus: outcome.status, lastError: error, nextAttemptAt: now + delay }
      }
    }
  }

  /** An error text never carries the secret or URL credentials. */
  private redact (text: string): string {
    let out = text
    if (this.secret !== null && this.secret !== '') out = out.split(this.secret).join('[redacted]')
    for (const url of this.urls) {
      if (out.includes(url)) out = out.split(url).join(displayUrl(url))
    }
    return out
  }
}
