// The runner of scheduled actions (contract §13): claims the due schedules from the store, runs
// each through the function it is given (publish or unpublish, through the normal update rules),
// and ends each claim: gone when it ran, kept as failed with its message when it did not.
//
// Exactly once across replicas and restarts comes from the store's claims and the actions:
// a claim hands a schedule to one claimant until its lease runs out (types/editorial.ts), and a
// process that dies mid-run leaves its claim to lapse, so another claimant runs it again; the
// actions are idempotent (a publish of a published entry writes nothing), so that second run
// writes nothing twice.
import { CmsError, GENERIC_INTERNAL_MESSAGE } from '../errors.js'
import type { EditorialStore, ScheduleRecord } from '../../types/editorial.js'

/** The subset of a pino logger the runner uses. */
export interface SchedulerLogger {
  info: (obj: object, msg: string) => void
  warn: (obj: object, msg: string) => void
  error: (obj: object, msg: string) => void
}

/** What the runner needs of the store. */
export type ScheduleClaims = Pick<EditorialStore, 'claimSchedules' | 'finishSchedule' | 'nextScheduleAt'>

export interface SchedulerOptions {
  store: ScheduleClaims
  /** Who claims: this process (the cluster origin). */
  owner: string
  /** Runs one schedule's action; throws when it cannot be done. */
  run: (schedule: ScheduleRecord) => Promise<void>
  log?: SchedulerLogger
  now?: () => number
  /** How long a claim holds: longer than a slow action, short enough that a crash costs little. */
  leaseMs?: number
  /** The longest sleep: other replicas add schedules this process does not hear of. */
  pollMs?: number
  /** Schedules claimed at once. */
  batch?: number
}

export const DEFAULT_LEASE_MS = 30_000
export const DEFAULT_POLL_MS = 1000
export const DEFAULT_BATCH = 10

const silent: SchedulerLogger = { info () {}, warn () {}, error () {} }

type State = 'idle' | 'running' | 'closed'

export class Scheduler {
  private readonly store: ScheduleClaims
  private readonly owner: string
  private readonly run: SchedulerOptions['run']
  private readonly log: SchedulerLogger
  private readonly now: () => number
  private readonly leaseMs: number
  private readonly pollMs: number
  private readonly batch: number
  private state: State = 'idle'
  private timer: NodeJS.Timeout | null = null
  /** The pass under way (a look at the store and the actions it claimed), or null. */
  private passing: Promise<void> | null = null
  private lookAgain = false
  /** Whether the last pass met a store error: logged once per outage. */
  private down = false

  constructor (options: SchedulerOptions) {
    this.store = options.store
    this.owner = options.owner
    this.run = options.run
    this.log = options.log ?? silent
    this.now = options.now ?? Date.now
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS
    this.batch = options.batch ?? DEFAULT_BATCH
  }

  /** Starts looking for due schedules, at once and then at least every `pollMs`. */
  start (): void {
    if (this.state !== 'idle') return
    this.state = 'running'
    this.look()
  }

  /** Looks at once (a schedule was just added here: its time may come before the next look). */
  wake (): void {
    this.look()
  }

  /** Stops: no new pass or action starts, and the action under way ends first. */
  async close (): Promise<void> {
    this.state = 'closed'
    this.clearTimer()
    await this.passing
  }

  /** Whether a pass is under way (tests and diagnostics). */
  get busy (): boolean {
    return this.passing !== null
  }

  private look (): void {
    if (this.state !== 'running') return
    if (this.passing !== null) {
      this.lookAgain = true
      return
    }
    this.clearTimer()
    this.passing = this.pass().then(wait => {
      this.passing = null
      const again = this.lookAgain
      this.lookAgain = false
      this.sleep(again ? 0 : wait)
    })
  }

  /** One look at the store; never rejects. Resolves with how long to sleep before the next. */
  private async pass (): Promise<number> {
    try {
      const wait = await this.runDue()
      if (this.down) {
        this.down = false
        this.log.info({}, 'scheduled actions resumed')
      }
      return wait
    } catch (err) {
      if (!this.down) {
        this.down = true
        this.log.warn({ err }, 'scheduled actions paused: the store did not answer; retrying')
      }
      return this.pollMs
    }
  }

  /** Claims and runs what is due; how long until the next look. */
  private async runDue (): Promise<number> {
    const next = await this.store.nextScheduleAt()
    const now = this.now()
    if (next === null) return this.pollMs
    const dueIn = Date.parse(next) - now
    if (dueIn > 0) return Math.min(dueIn, this.pollMs)
    const claimed = await this.store.claimSchedules(this.owner, new Date(now).toISOString(), this.leaseMs, this.batch)
    // Due but claimed by another (or a lapsed lease not yet claimable here): look again later.
    if (claimed.length === 0) return this.pollMs
    await this.runClaimed(claimed, now)
    // More may be due: look again at once.
    return 0
  }

  /** Runs claimed schedules in order (soonest first: a publish then an unpublish of one entry stay in order). */
  private async runClaimed (claimed: ScheduleRecord[], claimedAt: number): Promise<void> {
    for (const schedule of claimed) {
      // Closing, or half the lease gone: the rest's claims lapse and are run by the next claimant.
      if (this.state !== 'running' || this.now() - claimedAt > this.leaseMs / 2) return
      const error = await this.attempt(schedule)
      const ended = await this.store.finishSchedule(schedule.id, this.owner, error)
      if (!ended) this.log.info({ id: schedule.id }, 'a scheduled action ran after its claim was lost or it was deleted')
    }
  }

  /** Runs one action: null when done, its failure's message when it failed. An outage is thrown (nothing is kept). */
  private async attempt (schedule: ScheduleRecord): Promise<string | null> {
    try {
      await this.run(schedule)
      return null
    } catch (err) {
      // The store is down: the action did not fail, it could not run. Its claim lapses and it runs later.
      if (isOutage(err)) throw err
      const message = failureMessage(err)
      const where = { id: schedule.id, action: schedule.action, collection: schedule.collection, slug: schedule.slug }
      if (err instanceof CmsError && err.statusCode < 500) this.log.warn({ ...where, error: message }, 'a scheduled action failed')
      else this.log.error({ ...where, err }, 'a scheduled action failed')
      return message
    }
  }

  private sleep (ms: number): void {
    if (this.state !== 'running') return
    this.timer = setTimeout(() => {
      this.timer = null
      this.look()
    }, ms)
    // The timer alone never keeps the process alive.
    this.timer.unref()
  }

  private clearTimer (): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
  }
}

/** An unreachable store (contract §2: 503 UNAVAILABLE). */
function isOutage (err: unknown): boolean {
  return err instanceof CmsError && err.code === 'UNAVAILABLE'
}

/**
 * What a failed schedule keeps, in one line: a client error's message and its details (as the
 * API would answer them); for anything else the generic text, as a 500 answers (it may name
 * files or internals).
 */
export function failureMessage (err: unknown): string {
  if (!(err instanceof CmsError) || err.statusCode >= 500) return GENERIC_INTERNAL_MESSAGE
  const details = err.errors ?? []
  const text = details.length === 0 ? err.message : `${err.message.replace(/[.:]$/, '')}: ${details.join('; ')}`
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim()
}
