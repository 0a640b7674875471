// The editorial workflow (contract §13, lib/content/editorial.ts) through the content pipeline,
// against the in-memory store of test/fixtures/content-fakes.ts: versions kept by every write,
// restore through the update and create rules, pending drafts, and the scheduler's publish and
// unpublish. The real stores are exercised through HTTP in test/routes/versions*.test.ts and
// test/routes/draft*.test.ts.
import t, { type Test } from 'tap'
import type { ContentService } from '../../../lib/content/service.js'
import { CmsError, type ErrorCode } from '../../../lib/errors.js'
import { ResponseCache } from '../../../lib/cache.js'
import type { Caller } from '../../../lib/auth.js'
import type { ContentEvent } from '../../../types/events.js'
import type { Scope } from '../../../types/scope.js'
import { MemoryStore, contentService, postsModel } from '../../fixtures/content-fakes.js'

const scope: Scope = { locale: null, environment: 'default' }
const anonymous: Caller = { role: null, authenticated: false, invalidKey: false }

function setup (revisions = 50, cache?: ResponseCache): { service: ContentService, store: MemoryStore, events: ContentEvent[] } {
  const store = new MemoryStore()
  const events: ContentEvent[] = []
  const service = contentService([postsModel()], store, events, { revisions, ...(cache === undefined ? {} : { cache }) })
  return { service, store, events }
}

async function rejectsWith (t: Test, promise: Promise<unknown>, code: ErrorCode, message?: RegExp): Promise<void> {
  try {
    await promise
    t.fail(`expected ${code}`)
  } catch (err) {
    t.ok(err instanceof CmsError, 'a CmsError')
    t.equal((err as CmsError).code, code)
    if (message !== undefined) t.match((err as CmsError).message, message)
  }
}

const parse = (body: string): Record<string, unknown> => JSON.parse(body) as Record<string, unknown>
const events = (list: ContentEvent[]): string[] => list.map(e => `${e.event} ${String(e.previous_status)}->${String(e.status)}`)

t.test('publish and unpublish (the scheduler\'s actions) are idempotent updates', async t => {
  const { service, store, events: log } = setup()
  await service.create(scope, 'posts', { _slug: 'a', _status: 'draft', title: 'A' })
  const published = await service.publish(scope, 'posts', 'a')
  t.equal(published?.entry.status, 'published')
  t.equal(parse(published?.body ?? '{}')._status, 'published')
  t.equal(await service.publish(scope, 'posts', 'a'), null, 'published with no draft: nothing to do')
  const unpublished = await service.unpublish(scope, 'posts', 'a')
  t.equal(unpublished?.entry.status, 'draft')
  t.equal(await service.unpublish(scope, 'posts', 'a'), null, 'a draft already: nothing to do')
  t.same(events(log), ['content.created null->draft', 'content.updated draft->published', 'content.updated published->draft'])
  t.equal((await store.versions(scope, 'posts', 'a', 50, 0, 10)).total, 3, 'each write kept a version')
  await rejectsWith(t, service.publish(scope, 'posts', 'missing'), 'NOT_FOUND')
  await rejectsWith(t, service.unpublish(scope, 'posts', 'missing'), 'NOT_FOUND')
  await rejectsWith(t, service.publish(scope, 'nope', 'a'), 'NOT_FOUND', /Collection/)
})

t.test('publish applies a pending draft, once', async t => {
  const { service, store, events: log } = setup()
  await service.create(scope, 'posts', { _slug: 'a', title: 'Live' })
  await service.putDraft(scope, 'posts', 'a', { title: 'Next' })
  const published = await service.publish(scope, 'posts', 'a')
  t.equal(published?.entry.data.title, 'Next')
  t.equal(await store.getDraft(scope, 'posts', 'a'), undefined, 'the draft is gone')
  t.equal(await service.publish(scope, 'posts', 'a'), null, 'a re-run writes nothing')
  t.equal(log.length, 2)
})

t.test('publish validates against the current rules: a draft made invalid fails, and stays', async t => {
  const { service, store } = setup()
  await service.create(scope, 'posts', { _slug: 'a', title: 'A', code: 'x' })
  await service.create(scope, 'posts', { _slug: 'b', title: 'B' })
  await service.putDraft(scope, 'posts', 'b', { title: 'B2', code: 'y' })
  // Another entry takes the value after the draft was saved: the publish is a 422, the draft is kept.
  await service.update(scope, 'posts', 'a', { title: 'A', code: 'y' })
  await rejectsWith(t, service.publish(scope, 'posts', 'b'), 'VALIDATION_FAILED')
  t.not(await store.getDraft(scope, 'posts', 'b'), undefined)
})

t.test('versions: newest first, paged, after the delete; numbering goes on after a re-create', async t => {
  const { service } = setup()
  await service.create(scope, 'posts', { _slug: 'a', title: 'one' })
  await service.update(scope, 'posts', 'a', { title: 'two' })
  await service.patch(scope, 'posts', 'a', { _status: 'draft' })
  const page = await service.versions(scope, 'posts', 'a', {})
  t.same(page.items.map(v => [v.version, v.status]), [[3, 'draft'], [2, 'published'], [1, 'published']])
  t.same({ total: page.total, page: page.page, per_page: page.per_page, pages: page.pages }, { total: 3, page: 1, per_page: 20, pages: 1 })
  const second = await service.versions(scope, 'posts', 'a', { _page: '2', _per_page: '2' })
  t.same(second.items.map(v => v.version), [1])
  t.equal(second.pages, 2)
  await rejectsWith(t, service.versions(scope, 'posts', 'a', { _per_page: '0' }), 'BAD_REQUEST', /_per_page/)

  const v2 = parse(await service.version(scope, 'posts', 'a', 2))
  t.equal(v2.title, 'two')
  t.equal(v2._version, 2)
  t.equal(v2._status, 'published')
  t.same(Object.keys(v2).slice(0, 5), ['_slug', '_status', '_created_at', '_updated_at', '_version'])
  await rejectsWith(t, service.version(scope, 'posts', 'a', 9), 'NOT_FOUND', /Version 9/)

  await service.remove(scope, 'posts', 'a')
  t.equal((await service.versions(scope, 'posts', 'a', {})).total, 3, 'kept after the delete')
  await service.create(scope, 'posts', { _slug: 'a', title: 'again' })
  t.same((await service.versions(scope, 'posts', 'a', {})).items.map(v => v.version), [4, 3, 2, 1])
  await rejectsWith(t, service.versions(scope, 'posts', 'never', {}), 'NOT_FOUND')
  await rejectsWith(t, service.versions(scope, 'nope', 'a', {}), 'NOT_FOUND', /Collection/)
})

t.test('CMS_REVISIONS=0 keeps none; a low setting keeps the newest', async t => {
  const off = setup(0)
  await off.service.create(scope, 'posts', { _slug: 'a', title: 'one' })
  t.same(await off.service.versions(scope, 'posts', 'a', {}), { items: [], total: 0, page: 1, per_page: 20, pages: 0 }, 'an existing entry lists none')
  await rejectsWith(t, off.service.version(scope, 'posts', 'a', 1), 'NOT_FOUND')
  const three = setup(3)
  await three.service.create(scope, 'posts', { _slug: 'a', title: '1' })
  for (const title of ['2', '3', '4', '5']) await three.service.update(scope, 'posts', 'a', { title })
  t.same((await three.service.versions(scope, 'posts', 'a', {})).items.map(v => v.version), [5, 4, 3])
  await rejectsWith(t, three.service.version(scope, 'posts', 'a', 2), 'NOT_FOUND')
})

t.test('restore: an update with the version\'s data and status, through every update rule', async t => {
  const { service, events: log } = setup()
  await service.create(scope, 'posts', { _slug: 'a', title: 'one', code: 'c1' })
  await service.update(scope, 'posts', 'a', { title: 'two', code: 'c2', _status: 'draft' })
  const restored = await service.restore(scope, 'posts', 'a', 1)
  t.equal(restored.entry.data.title, 'one')
  t.equal(restored.entry.status, 'published')
  t.same(events(log).at(-1), 'content.updated draft->published')
  t.same((await service.versions(scope, 'posts', 'a', {})).items[0]?.version, 3, 'a new version')
  // The unique rule holds: another entry took the value since.
  await service.update(scope, 'posts', 'a', { title: 'three', code: 'c3' })
  await service.create(scope, 'posts', { _slug: 'b', title: 'b', code: 'c1' })
  await rejectsWith(t, service.restore(scope, 'posts', 'a', 1), 'VALIDATION_FAILED', /Validation/)
  await rejectsWith(t, service.restore(scope, 'posts', 'a', 99), 'NOT_FOUND', /Version 99/)
})

t.test('restore after the delete creates the entry again (content.created)', async t => {
  const { service, store, events: log } = setup()
  await service.create(scope, 'posts', { _slug: 'a', title: 'one', _status: 'draft' })
  await service.remove(scope, 'posts', 'a')
  const restored = await service.restore(scope, 'posts', 'a', 1)
  t.equal(restored.entry.status, 'draft')
  t.equal(restored.entry.data.title, 'one')
  t.same(events(log).at(-1), 'content.created null->draft')
  t.not(await store.get(scope, 'posts', 'a'), undefined)
  t.same((await service.versions(scope, 'posts', 'a', {})).items.map(v => v.version), [2, 1])
})

t.test('drafts: saved beside the live entry, with no event, no version and no cache change', async t => {
  const cache = new ResponseCache({ max: 100 })
  const { service, store, events: log } = setup(50, cache)
  const created = await service.create(scope, 'posts', { _slug: 'a', title: 'Live', seo: { title: 's' } })
  const before = await service.get(scope, 'posts', 'a', anonymous)
  const draft = parse(await service.putDraft(scope, 'posts', 'a', { _slug: 'ignored', title: 'Next', tags: ['b', 'a'] }))
  t.equal(draft._status, 'draft')
  t.equal(draft._slug, 'a')
  t.equal(draft.title, 'Next')
  t.same(draft.tags, ['a', 'b'], 'normalized as an update')
  t.equal(draft.uid, created.entry.data.uid, 'readonly fields left out keep their value')
  t.equal(draft._created_at, created.entry.createdAt)
  t.same(parse(await service.getDraft(scope, 'posts', 'a')), draft)
  t.equal(log.length, 1, 'no event')
  t.equal((await service.versions(scope, 'posts', 'a', {})).total, 1, 'no version')
  t.equal((await store.get(scope, 'posts', 'a'))?.data.title, 'Live', 'the live entry is unchanged')
  const after = await service.get(scope, 'posts', 'a', anonymous)
  t.equal(after.etag, before.etag, 'the cached answer is unchanged')
  t.ok(cache.size > 0, 'and still cached')

  await rejectsWith(t, service.putDraft(scope, 'posts', 'a', { title: '' }), 'VALIDATION_FAILED')
  await rejectsWith(t, service.putDraft(scope, 'posts', 'a', { title: 'x', uid: 'other' }), 'VALIDATION_FAILED', /Validation/)
  await rejectsWith(t, service.putDraft(scope, 'posts', 'a', { title: 'x', _status: 'live' }), 'BAD_REQUEST')
  await rejectsWith(t, service.putDraft(scope, 'posts', 'a', []), 'BAD_REQUEST')
  await rejectsWith(t, service.putDraft(scope, 'posts', 'missing', { title: 'x' }), 'NOT_FOUND')
  await service.create(scope, 'posts', { _slug: 'd', title: 'D', _status: 'draft' })
  await rejectsWith(t, service.putDraft(scope, 'posts', 'd', { title: 'x' }), 'CONFLICT', /draft/)
  await rejectsWith(t, service.getDraft(scope, 'posts', 'd'), 'NOT_FOUND', /no pending draft/)

  const published = await service.publishDraft(scope, 'posts', 'a')
  t.equal(published.entry.data.title, 'Next')
  t.equal(published.entry.status, 'published')
  t.same(events(log).at(-1), 'content.updated published->published')
  t.equal((await service.versions(scope, 'posts', 'a', {})).total, 2, 'the publish kept a version')
  t.not((await service.get(scope, 'posts', 'a', anonymous)).etag, before.etag, 'the cache was discarded')
  await rejectsWith(t, service.getDraft(scope, 'posts', 'a'), 'NOT_FOUND')
  await rejectsWith(t, service.publishDraft(scope, 'posts', 'a'), 'NOT_FOUND')
})

t.test('deleteDraft discards; the entry\'s delete removes its draft', async t => {
  const { service } = setup()
  await service.create(scope, 'posts', { _slug: 'a', title: 'Live' })
  await service.putDraft(scope, 'posts', 'a', { title: 'Next' })
  await service.deleteDraft(scope, 'posts', 'a')
  await rejectsWith(t, service.getDraft(scope, 'posts', 'a'), 'NOT_FOUND')
  await rejectsWith(t, service.deleteDraft(scope, 'posts', 'a'), 'NOT_FOUND')
  await service.putDraft(scope, 'posts', 'a', { title: 'Next' })
  await service.remove(scope, 'posts', 'a')
  await service.create(scope, 'posts', { _slug: 'a', title: 'New' })
  await rejectsWith(t, service.getDraft(scope, 'posts', 'a'), 'NOT_FOUND')
})

t.test('editorial writes take the entry\'s lock: a publish and a PATCH sent together both apply, in order', async t => {
  const { service, store } = setup()
  await service.create(scope, 'posts', { _slug: 'a', title: 'Live' })
  await service.putDraft(scope, 'posts', 'a', { title: 'Next' })
  const [published, patched] = await Promise.all([
    service.publishDraft(scope, 'posts', 'a'),
    service.patch(scope, 'posts', 'a', { code: 'X' })
  ])
  t.equal(published.entry.data.title, 'Next')
  t.same([patched.entry.data.title, patched.entry.data.code], ['Next', 'X'], 'the PATCH merged into the published draft')
  t.same((await store.get(scope, 'posts', 'a'))?.data.code, 'X')
  const [restored, unpublished] = await Promise.all([service.restore(scope, 'posts', 'a', 1), service.unpublish(scope, 'posts', 'a')])
  t.equal(restored.entry.data.title, 'Live')
  t.same([unpublished?.entry.status, unpublished?.entry.data.title], ['draft', 'Live'], 'the unpublish saw the restore')
  t.same((await service.versions(scope, 'posts', 'a', {})).items.map(v => v.version), [5, 4, 3, 2, 1])
})
