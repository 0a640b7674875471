// Scheduled publishing (contract §13): in the editor, a form that schedules a publish or an
// unpublish at a time entered in the browser's time zone (sent in UTC) and the entry's pending
// and failed schedules; the Schedules screen lists every pending and failed schedule.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { ApiError, api, describeError, seg } from '../api.js'
import { scopeQuery, useApp } from '../context.js'
import { href } from '../router.js'
import { canWriteContent } from '../session.js'
import type { ListEnvelope, Schedule } from '../types.js'
import { Link, Loading, PageTitle, Problem, formatDate, timeZoneName, useLoad } from '../ui.js'

const ACTION_WORDS: Record<Schedule['action'], string> = { publish: 'Publish', unpublish: 'Unpublish' }
/** An entry's schedules, in one request: the most a page holds (an entry has a handful). */
const ENTRY_PAGE = 1000

/** A `datetime-local` value (the browser's time zone) as an ISO instant in UTC; null when it is not a time. */
export function localToUtc (value: string): string | null {
  if (value === '') return null
  // A date-time without an offset is read in the browser's time zone (ECMAScript Date parsing).
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? null : date.toISOString()
}

function useCancel (reload: () => void): [string | null, (s: Schedule) => Promise<void>] {
  const { notify } = useApp()
  const [busy, setBusy] = useState<string | null>(null)
  const cancel = async (schedule: Schedule): Promise<void> => {
    setBusy(schedule.id)
    try {
      await api.delete(`/api/schedules/${seg(schedule.id)}`)
      notify(schedule.status === 'failed'
        ? `Removed the failed ${schedule.action} of ${schedule.slug}.`
        : `Cancelled the ${schedule.action} of ${schedule.slug} at ${formatDate(schedule.at)}.`)
    } catch (err) {
      notify(`Not cancelled: ${describeError(err)}`, 'error')
    } finally {
      setBusy(null)
      reload()
    }
  }
  return [busy, cancel]
}

export function EntrySchedules ({ collection, slug, canWrite }: { collection: string, slug: string, canWrite: boolean }): JSX.Element {
  const { scope, locales, defaultEnvironment, notify } = useApp()
  const environment = scope.environment ?? defaultEnvironment
  const locale = scope.locale ?? locales.default
  // The server keeps the entry's (its locale's, when locales are on: null is left out of the query).
  const entryQuery = { collection, slug, _environment: environment, _locale: locale, _per_page: ENTRY_PAGE }
  const schedules = useLoad(async signal => {
    const [pending, failed] = await Promise.all(['pending', 'failed'].map(async status =>
      await api.get<ListEnvelope<Schedule>>('/api/schedules', { ...entryQuery, status }, signal)))
    return [...(pending?.items ?? []), ...(failed?.items ?? [])]
  }, [collection, slug, environment, locale], { keep: true })
  const [busy, cancel] = useCancel(schedules.reload)
  const [action, setAction] = useState<Schedule['action']>('publish')
  const [when, setWhen] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [sending, setSending] = useState(false)
  const zone = timeZoneName()

  const submit = async (): Promise<void> => {
    const at = localToUtc(when)
    if (at === null) { setError('Enter a date and a time.'); return }
    setSending(true)
    setError(null)
    try {
      const made = await api.post<Schedule>(`/api/content/${seg(collection)}/${seg(slug)}/schedule`, { action, at }, scopeQuery(scope))
      setWhen('')
      notify(`${ACTION_WORDS[made.action]} scheduled for ${formatDate(made.at)} (${zone}).`)
      schedules.reload()
    } catch (err) {
      // The server's message, its field named in words: "at: must not be in the past" reads "The time must not be in the past".
      setError(err instanceof ApiError && err.errors.length > 0 ? err.errors.map(e => e.replace(/^at: /, 'The time ')).join('; ') : describeError(err))
    } finally {
      setSending(false)
    }
  }

  const items = schedules.data ?? []
  return (
    <section class='card' aria-labelledby='schedule-heading'>
      <h2 id='schedule-heading'>Schedule</h2>
      {schedules.error !== null && <p class='muted'>{describeError(schedules.error)}</p>}
      {schedules.loading && schedules.data === undefined && <Loading />}
      {schedules.data !== undefined && (items.length === 0
        ? <p class='muted'>Nothing is scheduled for this entry.</p>
        : (
          <ul class='schedules' aria-label='Scheduled for this entry'>
            {items.map(s => (
              <li key={s.id} class={s.status === 'failed' ? 'failed' : undefined}>
                <span><strong>{ACTION_WORDS[s.action]}</strong> {formatDate(s.at)}</span>
                {s.status === 'failed' && <span class='field-error'>Failed: {s.error}</span>}
                {canWrite && (
                  <button type='button' class='link-button' disabled={busy === s.id} onClick={() => { void cancel(s) }}>
                    {s.status === 'failed' ? 'Remove' : 'Cancel'}<span class='visually-hidden'> the {s.action} at {formatDate(s.at)}</span>
                  </button>
                )}
              </li>
            ))}
          </ul>
          ))}
      {canWrite && (
        <form class='schedule-form' onSubmit={e => { e.preventDefault(); void submit() }}>
          <div class='field'>
            <label for='schedule-action'>Action</label>
            <select id='schedule-action' value={action} onChange={e => { setAction(e.currentTarget.value as Schedule['action']) }}>
              <option value='publish'>Publish</option>
              <option value='unpublish'>Unpublish</option>
            </select>
          </div>
          <div class={`field ${error !== null ? 'has-error' : ''}`}>
            <label for='schedule-at'>At <span class='muted'>({zone})</span></label>
            <input
              id='schedule-at' type='datetime-local' step={1} value={when} aria-invalid={error !== null}
              aria-describedby={error !== null ? 'schedule-error' : undefined}
              onInput={e => { setWhen(e.currentTarget.value); setError(null) }}
            />
            {error !== null && <p id='schedule-error' class='field-error' role='alert'>{error}</p>}
          </div>
          <button type='submit' disabled={sending}>{sending ? 'Scheduling…' : 'Schedule'}</button>
        </form>
      )}
    </section>
  )
}

/** The Schedules screen: every pending schedule (soonest first) and every failed one, with its error. */
export function SchedulesScreen (): JSX.Element {
  const { session } = useApp()
  const canWrite = canWriteContent(session.role)
  return (
    <>
      <PageTitle title='Schedules'>Schedules</PageTitle>
      <p class='hint'>Times in {timeZoneName()}. A scheduled action runs within 5 seconds of its time.</p>
      <ScheduleTable status='pending' canWrite={canWrite} />
      <ScheduleTable status='failed' canWrite={canWrite} />
    </>
  )
}

const PER_PAGE = 50

function ScheduleTable ({ status, canWrite }: { status: Schedule['status'], canWrite: boolean }): JSX.Element {
  const { locales, defaultEnvironment } = useApp()
  const [page, setPage] = useState(1)
  const list = useLoad(async signal => await api.get<ListEnvelope<Schedule>>('/api/schedules', { status, _page: page, _per_page: PER_PAGE }, signal), [status, page], { keep: true })
  const [busy, cancel] = useCancel(list.reload)
  const failed = status === 'failed'
  const headingId = `schedules-${status}`
  const data = list.data
  return (
    <section class='schedule-section' aria-labelledby={headingId}>
      <h2 id={headingId}>{failed ? 'Failed' : 'Pending'}{data !== undefined ? ` (${data.total})` : ''}</h2>
      {list.error !== null && <Problem error={list.error} retry={list.reload} />}
      {list.loading && data === undefined && <Loading />}
      {data !== undefined && data.items.length === 0 && <p class='muted'>{failed ? 'No schedule has failed.' : 'Nothing is scheduled.'}</p>}
      {data !== undefined && data.items.length > 0 && (
        <table class='entries'>
          <thead>
            <tr>
              <th scope='col'>When</th>
              <th scope='col'>Action</th>
              <th scope='col'>Entry</th>
              {failed && <th scope='col'>Error</th>}
              {canWrite && <th scope='col'><span class='visually-hidden'>Actions</span></th>}
            </tr>
          </thead>
          <tbody>
            {data.items.map(s => (
              <tr key={s.id}>
                <td data-label='When'>{formatDate(s.at)}</td>
                <td data-label='Action'>{ACTION_WORDS[s.action]}</td>
                <td data-label='Entry'>
                  <Link href={href(['content', s.collection, 'entry', s.slug], {
                    locale: s.locale === null || s.locale === locales.default ? null : s.locale,
                    env: s.environment === defaultEnvironment ? null : s.environment
                  })}
                  >
                    {s.collection}/{s.slug}
                  </Link>
                  {(s.locale !== null || s.environment !== defaultEnvironment) && (
                    <span class='muted'> · {[s.locale, s.environment !== defaultEnvironment ? s.environment : null].filter(Boolean).join(' · ')}</span>
                  )}
                </td>
                {failed && <td data-label='Error' class='field-error'>{s.error}</td>}
                {canWrite && (
                  <td>
                    <button type='button' disabled={busy === s.id} onClick={() => { void cancel(s) }}>
                      {failed ? 'Remove' : 'Cancel'}<span class='visually-hidden'> the {s.action} of {s.collection}/{s.slug}</span>
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data !== undefined && data.pages > 1 && (
        <nav class='pager' aria-label={`${failed ? 'Failed' : 'Pending'} schedules pages`}>
          <button type='button' disabled={page <= 1} onClick={() => { setPage(p => p - 1) }}>Previous</button>
          <span>{page} of {data.pages}</span>
          <button type='button' disabled={page >= data.pages} onClick={() => { setPage(p => p + 1) }}>Next</button>
        </nav>
      )}
    </section>
  )
}
