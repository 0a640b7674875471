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
