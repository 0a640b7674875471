// The runner of scheduled actions, on a fake store whose claims follow types/editorial.ts (one
// claimant per schedule until its lease runs out): due ones run once and are ended, failures are
// kept with one line of text, store outages are logged once and retried, a lapsed claim is run
// again by another claimant, and close waits for the action under way.
import t, { type Test } from 'tap'
import { CmsError, GENERIC_INTERNAL_MESSAGE, validationFailed } from '../../../lib/errors.js'
import { Scheduler, failureMessage, type SchedulerOptions } from '../../../lib/editorial/scheduler.js'
import type { ScheduleClaims } from '../../../lib/editorial/scheduler.js'
import type { ScheduleAction, ScheduleRecord } from '../../../types/editorial.js'
import { until } from '../webhooks/receiver.js'

interface Held { record: ScheduleRecord, owner: string | null, until: number }

/** The store's side of schedules, in memory, with `fail` to make a call reject (an outage). */
class FakeClaims implements ScheduleClaims {
  readonly held = new Map<string, Held>()
  readonly finished: Array<{ id: string, owner: string, error: string | null }> = []
  claims = 0
  fail: CmsError | null = null

  add (id: string, at: number, action: ScheduleAction = 'publish'): void {
    const record: ScheduleRecord = {
      id,
      scope: { locale: null, environment: 'default' },
      collection: 'post',
      slug: id,
      action,
      at: new Date(at).toISOString(),
      createdAt: new Date().toISOString(),
      status: 'pending',
      error: null
    }
    this.held.set(id, { record, owner: null, until: 0 })
  }

  private pending (): Held[] {
    return [...this.held.values()].filter(h => h.record.status === 'pending').sort((a, b) => a.record.at.localeCompare(b.record.at))
  }

  private check (): void {
    if (this.fail !== null) throw this.fail
  }

  async nextScheduleAt (): Promise<string | null> {
    this.check()
    return this.pending()[0]?.record.at ?? null
  }

  async claimSchedules (owner: string, now: string, leaseMs: number, limit: number): Promise<ScheduleRecord[]> {
    this.check()
    this.claims++
    const time = Date.parse(now)
    const free = this.pending().filter(h => h.record.at <= now && (h.owner === null || h.until <= time)).slice(0, limit)
    for (const h of free) { h.owner = owner; h.until = time + leaseMs }
    return free.map(h => h.record)
  }

  async finishSchedule (id: string, owner: string, error: string | null): Promise<boolean> {
    this.check()
    const h = this.held.get(id)
    if (h === undefined || h.owner !== owner || h.record.status !== 'pending') return false
    this.finished.push({ id, owner, error })
    if (error === null) this.held.delete(id)
    else h.record = { ...h.record, status: 'failed', error }
    return true
  }
}

interface Logged { level: string, msg: string, obj: object }

function logger (): { log: SchedulerOptions['log'], lines: Logged[] } {
  const lines: Logged[] = []
  const at = (level: string) => (obj: object, msg: string) => { lines.push({ level, msg, obj }) }
  return { log: { info: at('info'), warn: at('warn'), error: at('error') }, lines }
}

function runner (t: Test, options: Partial<SchedulerOptions> & { store: ScheduleClaims }): Scheduler {
  const s = new Scheduler({ owner: 'a', run: async () => {}, pollMs: 20, ...options })
  t.teardown(async () => { await s.close() })
  s.start()
  return s
}

function deferred (): { promise: Promise<void>, resolve: () => void } {
  let done = (): void => {}
  const promise = new Promise<void>(resolve => { done = resolve })
  return { promise, resolve: done }
}

t.test('a due schedule runs once and is ended; a later one waits for its time', async t => {
  const store = new FakeClaims()
  const ran: Array<{ id: string, at: number }> = []
  store.add('now', Date.now() - 10)
  const later = Date.now() + 300
  store.add('later', later)
  runner(t, { store, run: async s => { ran.push({ id: s.id, at: Date.now() }) } })
  await until(() => store.finished.length === 2, 5000, 'both ended')
  t.same(ran.map(r => r.id), ['now', 'later'], 'each once, soonest first')
  t.ok((ran[1]?.at ?? 0) >= later, 'not before its time')
  t.same(store.finished.map(f => f.error), [null, null])
  t.equal(store.held.size, 0, 'both gone')
})

t.test('a failure is kept with its message, in one line and without a stack', async t => {
  const store = new FakeClaims()
  store.add('invalid', Date.now())
  store.add('broken', Date.now() + 1)
  const { log, lines } = logger()
  runner(t, {
    store,
    log,
    run: async s => {
      if (s.id === 'invalid') throw validationFailed(['title: is required', 'tag: must be\none of h1, h2'])
      throw new Error('ENOENT: /var/lib/secret/file.json')
    }
  })
  await until(() => store.finished.length === 2, 5000, 'both ended')
  t.same(store.finished.map(f => [f.id, f.error]), [
    ['invalid', 'Validation failed: title: is required; tag: must be one of h1, h2'],
    ['broken', GENERIC_INTERNAL_MESSAGE]
  ])
  t.equal(store.held.get('invalid')?.record.status, 'failed', 'kept as failed')
  t.same(lines.map(l => [l.level, l.msg]), [['warn', 'a scheduled action failed'], ['error', 'a scheduled action failed']])
})

t.test('failureMessage: a client error\'s text and details; anything else the generic text', async t => {
  t.equal(failureMessage(new CmsError('NOT_FOUND', "Entry 'x' not found.")), "Entry 'x' not found.")
  t.equal(failureMessage(validationFailed(['a: bad'])), 'Validation failed: a: bad')
  t.equal(failureMessage(new CmsError('CONFLICT', 'Two\r\n lines.')), 'Two lines.')
  t.equal(failureMessage(new CmsError('INTERNAL', 'at /srv/app.js:1:2')), GENERIC_INTERNAL_MESSAGE)
  t.equal(failureMessage('thrown text'), GENERIC_INTERNAL_MESSAGE)
})

t.test('a store outage is logged once, retried, and the runner goes on when it ends', async t => {
  const store = new FakeClaims()
  store.fail = new CmsError('UNAVAILABLE', 'The database is unavailable.')
  store.add('due', Date.now())
  const { log, lines } = logger()
  let looks = 0
  const watched: ScheduleClaims = {
    nextScheduleAt: async () => { looks++; return await store.nextScheduleAt() },
    claimSchedules: async (...args) => await store.claimSchedules(...args),
    finishSchedule: async (...args) => await store.finishSchedule(...args)
  }
  runner(t, { store: watched, log })
  await until(() => looks >= 4, 5000, 'several looks during the outage')
  t.same(lines.map(l => [l.level, l.msg]), [['warn', 'scheduled actions paused: the store did not answer; retrying']], 'logged once')
  store.fail = null
  await until(() => store.finished.length === 1, 5000, 'run once the store is back')
  t.same(lines.map(l => l.level), ['warn', 'info'], 'and its end logged once')
})

t.test('an action the store cannot carry out is not a failure: its claim lapses and it runs again', async t => {
  const store = new FakeClaims()
  store.add('due', Date.now())
  let calls = 0
  runner(t, {
    store,
    leaseMs: 100,
    run: async () => { if (++calls === 1) throw new CmsError('UNAVAILABLE', 'The database is unavailable.') }
  })
  await until(() => store.finished.length === 1, 5000, 'ended')
  t.equal(calls, 2, 'run again after the lease')
  t.same(store.finished, [{ id: 'due', owner: 'a', error: null }], 'never kept as failed')
})

t.test('two runners: each schedule runs once; a claim left by a crashed runner is run by the other after its lease', async t => {
  const store = new FakeClaims()
  for (let i = 0; i < 25; i++) store.add(`s${String(i).padStart(2, '0')}`, Date.now() - 1000 + i)
  const ran: string[] = []
  const run = async (s: ScheduleRecord): Promise<void> => { ran.push(s.id) }
  const a = runner(t, { store, owner: 'a', run, batch: 3 })
  const b = runner(t, { store, owner: 'b', run, batch: 3 })
  await until(() => store.held.size === 0, 5000, 'all ended')
  t.equal(ran.length, 25, 'as many runs as schedules')
  t.equal(new Set(ran).size, 25, 'each once')
  t.same(new Set(store.finished.map(f => f.owner)), new Set(['a', 'b']), 'both took part')
  await a.close()
  await b.close()

  // A runner whose action never ends (its process died mid-run): the other runs it after the lease.
  store.add('crash', Date.now())
  const stuck = deferred()
  const dying = new Scheduler({ store, owner: 'dying', run: async () => { await stuck.promise }, pollMs: 20, leaseMs: 200 })
  dying.start()
  await until(() => store.held.get('crash')?.owner === 'dying', 5000, 'claimed by the dying runner')
  const ranAgain: string[] = []
  const { log, lines } = logger()
  runner(t, { store, owner: 'c', log, run: async s => { ranAgain.push(s.id) }, leaseMs: 200 })
  await until(() => store.held.size === 0, 5000, 'ended by the other')
  t.same(ranAgain, ['crash'])
  t.same(store.finished.at(-1), { id: 'crash', owner: 'c', error: null })
  // The dying runner's own end comes too late: its claim was lost, and that is only noted.
  const closing = dying.close()
  stuck.resolve()
  await closing
  t.same(store.finished.filter(f => f.id === 'crash').length, 1, 'ended once')
  t.same(lines, [], 'the runner that took it over logs nothing')
})

t.test('close waits for the action under way, and nothing runs after it', async t => {
  const store = new FakeClaims()
  store.add('first', Date.now() - 2)
  store.add('second', Date.now() - 1)
  const gate = deferred()
  const ran: string[] = []
  const s = new Scheduler({ store, owner: 'a', pollMs: 20, run: async r => { ran.push(r.id); await gate.promise } })
  s.start()
  await until(() => ran.length === 1, 5000, 'the first action started')
  let closed = false
  const closing = s.close().then(() => { closed = true })
  await new Promise(resolve => setImmediate(resolve))
  t.notOk(closed, 'close waits for the action')
  t.ok(s.busy)
  gate.resolve()
  await closing
  t.same(ran, ['first'], 'the second is not started')
  t.same(store.finished.map(f => f.id), ['first'], 'the first is ended')
  t.equal(store.held.get('second')?.owner, 'a', 'the second\'s claim lapses for the next claimant')
  const claims = store.claims
  s.start()
  s.wake()
  await new Promise(resolve => setTimeout(resolve, 60))
  t.equal(store.claims, claims, 'a closed runner does not start again')
})

t.test('the rest of a batch is left once half the lease is gone', async t => {
  const store = new FakeClaims()
  store.add('slow', Date.now() - 2)
  store.add('next', Date.now() - 1)
  let offset = 0
  const ran: string[] = []
  runner(t, {
    store,
    leaseMs: 1000,
    now: () => Date.now() + offset,
    run: async s => {
      ran.push(s.id)
      // The slow action takes (as the clock tells) most of the lease.
      if (s.id === 'slow') offset += 600
    }
  })
  await until(() => store.finished.length === 2, 5000, 'both ended')
  t.same(ran, ['slow', 'next'], 'the next is run once its claim lapsed and it was claimed again')
  t.ok(store.claims >= 2)
})

t.test('wake: a schedule added for soon runs at its time, not at the next poll', async t => {
  const store = new FakeClaims()
  const ran: number[] = []
  const s = runner(t, { store, pollMs: 60_000, run: async () => { ran.push(Date.now()) } })
  await until(() => !s.busy, 5000, 'the first look is over')
  const at = Date.now() + 100
  store.add('soon', at)
  s.wake()
  s.wake()
  await until(() => ran.length === 1, 5000, 'run')
  t.ok((ran[0] ?? 0) >= at, 'at its time')
  t.ok((ran[0] ?? 0) - at < 2000, 'long before the next poll')
})
