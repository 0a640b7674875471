// Scheduled actions at the API, on a fake store: the checks before a schedule is stored (the
// collection, the slug, the time), the view, the list's paging, and an unknown id.
import t from 'tap'
import { CmsError, notFound } from '../../../lib/errors.js'
import { ScheduleService, dueTime } from '../../../lib/editorial/schedules.js'
import type { ScheduleFilter, ScheduleInput, ScheduleRecord, ScheduleStatus } from '../../../types/editorial.js'

const NOW = Date.parse('2030-01-01T00:00:00.000Z')

function service (): { schedules: ScheduleService, stored: ScheduleRecord[], wakes: () => number, filters: ScheduleFilter[] } {
  const stored: ScheduleRecord[] = []
  const filters: ScheduleFilter[] = []
  let wakes = 0
  const schedules = new ScheduleService({
    store: {
      addSchedule: async (input: ScheduleInput) => {
        if (input.slug === 'missing') throw notFound("Entry 'missing' not found.")
        const record: ScheduleRecord = { ...input, createdAt: new Date(NOW).toISOString(), status: 'pending', error: null }
        stored.push(record)
        return record
      },
      listSchedules: async (status: ScheduleStatus, filter: ScheduleFilter, offset: number, limit: number) => {
        filters.push(filter)
        const matching = stored.filter(s => s.status === status && (filter.environment === undefined || s.scope.environment === filter.environment) &&
          (filter.locale === undefined || s.scope.locale === filter.locale) && (filter.collection === undefined || s.collection === filter.collection) &&
          (filter.slug === undefined || s.slug === filter.slug))
        return { items: matching.slice(offset, offset + limit), total: matching.length }
      },
      deleteSchedule: async (id: string) => {
        const at = stored.findIndex(s => s.id === id)
        if (at !== -1) stored.splice(at, 1)
        return at !== -1
      }
    },
    checkCollection: collection => { if (collection !== 'post') throw notFound(`Collection '${collection}' not found.`) },
    added: () => { wakes++ },
    now: () => NOW
  })
  return { schedules, stored, wakes: () => wakes, filters }
}

const code = (err: unknown): string | undefined => err instanceof CmsError ? err.code : undefined

t.test('create: the view, the time in UTC, a random id, and the runner told', async t => {
  const { schedules, stored, wakes } = service()
  const scope = { locale: 'de', environment: 'staging' }
  const view = await schedules.create(scope, 'post', 'Hello World', { action: 'unpublish', at: '2030-01-01T02:30:00+02:00' })
  t.match(view.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  t.same({ ...view, id: 'x' }, {
    id: 'x',
    action: 'unpublish',
    at: '2030-01-01T00:30:00.000Z',
    collection: 'post',
    slug: 'hello-world',
    locale: 'de',
    environment: 'staging',
    status: 'pending',
    created_at: '2030-01-01T00:00:00.000Z',
    error: null
  }, 'the slug normalized as in an entry path')
  t.equal(stored.length, 1)
  t.equal(wakes(), 1)
  const again = await schedules.create(scope, 'post', 'hello-world', { action: 'publish', at: '2030-01-01T00:30:00Z' })
  t.not(again.id, view.id, 'ids differ')
})

t.test('create: 404 unknown collection or entry, 400 a bad slug, 422 a bad or past time; nothing stored', async t => {
  const { schedules, stored, wakes } = service()
  const scope = { locale: null, environment: 'default' }
  const at = '2030-06-01T00:00:00Z'
  t.equal(code(await schedules.create(scope, 'nope', 'a', { action: 'publish', at }).catch(e => e)), 'NOT_FOUND')
  t.equal(code(await schedules.create(scope, 'post', 'missing', { action: 'publish', at }).catch(e => e)), 'NOT_FOUND')
  t.equal(code(await schedules.create(scope, 'post', '../x', { action: 'publish', at }).catch(e => e)), 'BAD_REQUEST')
  const past = await schedules.create(scope, 'post', 'a', { action: 'publish', at: '2029-12-31T23:59:59.999Z' }).catch(e => e)
  t.equal(code(past), 'VALIDATION_FAILED')
  t.same((past as CmsError).errors, ['at: must not be in the past'])
  t.equal(stored.length, 0)
  t.equal(wakes(), 0)
})

t.test('dueTime: ISO 8601 date-times with a zone, on real days', async t => {
  t.equal(dueTime('2030-01-01T00:00:00Z', NOW), '2030-01-01T00:00:00.000Z', 'now is not past')
  t.equal(dueTime('2030-01-01t01:00z', NOW), '2030-01-01T01:00:00.000Z', 'seconds optional, any case')
  t.equal(dueTime('2030-01-01T05:30:00.123456+05:30', NOW), '2030-01-01T00:00:00.123Z', 'offsets and fractions')
  for (const bad of ['', 'tomorrow', '2030-01-02', '2030-01-02T10:00:00', '2030-02-30T10:00:00Z', '2030-13-01T00:00:00Z',
    '2030-01-02T24:00:00Z', '2030-01-02T10:60:00Z', '2030-01-02 10:00:00Z', '1893456000000', '+012030-01-02T10:00:00Z']) {
    const err = (() => { try { return dueTime(bad, NOW) } catch (e) { return e } })()
    t.equal(code(err), 'VALIDATION_FAILED', `${JSON.stringify(bad)} refused`)
    t.match((err as CmsError).errors?.[0], /^at: must be an ISO 8601 date-time/)
  }
})

t.test('list: pending by default, failed on request, by environment, paged', async t => {
  const { schedules, stored } = service()
  for (let i = 0; i < 5; i++) {
    await schedules.create({ locale: null, environment: i < 3 ? 'default' : 'staging' }, 'post', `e${i}`, { action: 'publish', at: `2030-01-0${i + 2}T00:00:00Z` })
  }
  stored[4] = { ...(stored[4] as ScheduleRecord), status: 'failed', error: 'Validation failed: title: is required' }
  const first = await schedules.list({ environment: null, perPage: '2' })
  t.same([first.total, first.page, first.per_page, first.pages, first.items.map(s => s.slug)], [4, 1, 2, 2, ['e0', 'e1']])
  const second = await schedules.list({ environment: null, page: '2', perPage: '2' })
  t.same(second.items.map(s => s.slug), ['e2', 'e3'])
  const failed = await schedules.list({ status: 'failed', environment: 'staging' })
  t.same([failed.total, failed.per_page, failed.items.map(s => [s.slug, s.error])], [1, 20, [['e4', 'Validation failed: title: is required']]])
  t.same((await schedules.list({ environment: 'staging' })).items.map(s => s.slug), ['e3'])
  t.equal(code(await schedules.list({ environment: null, page: '0' }).catch(e => e)), 'BAD_REQUEST')
  t.same((await schedules.list({ environment: 'elsewhere' })).pages, 0)
})

t.test('list by entry: the filter goes to the store; 400 a slug without its collection or not a slug, 404 an unknown collection', async t => {
  const { schedules, filters } = service()
  await schedules.create({ locale: 'en', environment: 'default' }, 'post', 'a', { action: 'publish', at: '2030-01-02T00:00:00Z' })
  await schedules.create({ locale: 'en', environment: 'default' }, 'post', 'b', { action: 'publish', at: '2030-01-03T00:00:00Z' })
  const mine = await schedules.list({ environment: 'default', locale: 'en', collection: 'post', slug: 'b' })
  t.same([mine.total, mine.items.map(s => s.slug)], [1, ['b']])
  t.same(filters.at(-1), { environment: 'default', locale: 'en', collection: 'post', slug: 'b' }, 'the whole filter, to the store')
  await schedules.list({ environment: null, locale: null, collection: 'post' })
  t.same(filters.at(-1), { locale: null, collection: 'post' }, 'locale null (locales off) is a filter; no environment: none')
  await schedules.list({ environment: null })
  t.same(filters.at(-1), {}, 'no parameter: no filter')
  const before = filters.length
  t.equal(code(await schedules.list({ environment: null, slug: 'b' }).catch(e => e)), 'BAD_REQUEST', 'slug without collection')
  t.equal(code(await schedules.list({ environment: null, collection: 'nope' }).catch(e => e)), 'NOT_FOUND', 'unknown collection')
  t.equal(code(await schedules.list({ environment: null, collection: 'post', slug: '../x' }).catch(e => e)), 'BAD_REQUEST', 'not a slug')
  t.equal(filters.length, before, 'none of them reached the store')
})

t.test('remove: 404 for an unknown id', async t => {
  const { schedules, stored } = service()
  const view = await schedules.create({ locale: null, environment: 'default' }, 'post', 'a', { action: 'publish', at: '2030-02-01T00:00:00Z' })
  await schedules.remove(view.id)
  t.equal(stored.length, 0)
  t.equal(code(await schedules.remove(view.id).catch(e => e)), 'NOT_FOUND')
})
