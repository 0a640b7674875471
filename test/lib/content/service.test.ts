// The write pipeline against stand-ins for the registry and the store, with the real reference
// service and response cache: the order of the rules and of the steps, PUT and PATCH semantics,
// events and serialization. The real stores and models are exercised through HTTP in
// test/routes/content*.test.ts.
import t, { type Test } from 'tap'
import { COLLECTION_NOT_FOUND, updateRetryDelay, type ContentReferences, type ContentService } from '../../../lib/content/service.js'
import { CmsError, type ErrorCode } from '../../../lib/errors.js'
import { etagOf } from '../../../lib/etag.js'
import { ResponseCache } from '../../../lib/cache.js'
import type { Caller } from '../../../lib/auth.js'
import type { ContentEvent } from '../../../types/events.js'
import type { Scope } from '../../../types/scope.js'
import type { StoredEntry } from '../../../types/store.js'
import { MemoryStore, contentService, fakeRegistry, postsModel, referenceService } from '../../fixtures/content-fakes.js'

const scope: Scope = { locale: null, environment: 'default' }
const admin: Caller = { role: 'admin', authenticated: true, invalidKey: false }
const anonymous: Caller = { role: null, authenticated: false, invalidKey: false }

function setup (): { service: ContentService, store: MemoryStore, events: ContentEvent[] } {
  const store = new MemoryStore()
  const events: ContentEvent[] = []
  const service = contentService([postsModel()], store, events)
  return { service, store, events }
}

/**
 * The real reference service with its write steps recorded in `log`: `check` refuses a title
 * 'dangling' (as a missing reference would be), `relativeAssetUrls` appends '!' to the title.
 */
function recordingReferences (store: MemoryStore, log: string[], over: Partial<ContentReferences> = {}): ContentReferences {
  const real = referenceService(fakeRegistry([postsModel()]), store)
  return {
    parseResolve: (raw, model) => real.parseResolve(raw, model),
    format: (model, view) => real.format(model, view),
    resolve: async (...args) => await real.resolve(...args),
    resolveTexts: async (...args) => await real.resolveTexts(...args),
    check: async (_scope, _model, data) => {
      log.push(`check ${String(data.title)}`)
      return data.title === 'dangling' ? ['author: no such entry'] : []
    },
    relativeAssetUrls: (_scope, data) => {
      log.push('relativeAssetUrls')
      return { ...data, title: `${String(data.title)}!` }
    },
    updateIndex: change => { log.push(`updateIndex ${change.operation} ${change.slug} entry=${String(change.entry?.data.title ?? null)} previous=${String(change.previous?.data.title ?? null)}`) },
    ...over
  }
}

/** A response cache that records its discards in `log`. */
class RecordingCache extends ResponseCache {
  constructor (private readonly log: string[]) { super({ max: 100 }) }
  override invalidate (tag: string): number {
    this.log.push(`invalidate ${tag.replace('\u0000', '/')}`)
    return super.invalidate(tag)
  }
}

async function rejectsWith (t: Test, promise: Promise<unknown> | (() => unknown), code: ErrorCode, message?: RegExp): Promise<CmsError | undefined> {
  try {
    await (typeof promise === 'function' ? promise() : promise)
    t.fail(`expected ${code}`)
    return undefined
  } catch (err) {
    if (!(err instanceof CmsError)) throw err
    t.equal(err.code, code, `${code}: ${err.message}`)
    if (message !== undefined) t.match(err.message, message)
    return err
  }
}

t.test('create: rules in order', async t => {
  const { service, store, events } = setup()
  await rejectsWith(t, service.create(scope, 'nope', { _slug: '../x', _status: 'bad' }), 'NOT_FOUND', /Collection 'nope'/)
  await rejectsWith(t, service.create(scope, 'posts', [{ _slug: 'a' }]), 'BAD_REQUEST', /JSON object/)
  await rejectsWith(t, service.create(scope, 'posts', { _status: 'bad', title: 1 }), 'BAD_REQUEST', /_slug is required/)
  await rejectsWith(t, service.create(scope, 'posts', { _slug: 5, title: 'x' }), 'BAD_REQUEST', /must be a string/)
  await rejectsWith(t, service.create(scope, 'posts', { _slug: 'a/b', _status: 'bad' }), 'BAD_REQUEST', /path characters/)
  await rejectsWith(t, service.create(scope, 'posts', { _slug: 'ok', _status: 'bad', title: 1 }), 'BAD_REQUEST', /_status/)
  const invalid = await rejectsWith(t, service.create(scope, 'posts', { _slug: 'ok', title: 1, extra: true, tags: 'z' }), 'VALIDATION_FAILED')
  t.same(invalid?.errors, ['title: is required', 'tags: must be one of a, b, c, got z', 'extra: is not a field of posts'], 'one message per problem')
  t.same(store.calls.filter(c => !c.startsWith('get')), [], 'nothing reached the store')
  t.same(events, [])

  const created = await service.create(scope, 'posts', { _slug: 'Hello World', title: 'Hi', tags: 'b', _created_at: 'x', _updated_at: 'y' })
  const body = JSON.parse(created.body) as Record<string, unknown>
  t.equal(body._slug, 'hello-world', 'the slug is normalized')
  t.equal(body._status, 'published', 'absent status: published')
  t.equal(body._created_at, '2024-01-01T00:00:01.000Z', 'timestamps come from the store, not the body')
  t.same(body.tags, ['b'], 'normalized (multi-select)')
  t.match(body.uid, /^[0-9a-f-]{36}$/, 'auto value applied')
  t.same(Object.keys(body), ['_slug', '_status', '_created_at', '_updated_at', 'title', 'uid', 'tags'], 'system fields, then schema order')
  t.strictSame(events, [{ event: 'content.created', collection: 'posts', slug: 'hello-world', locale: null, environment: 'default', seq: 1, status: 'published', previous_status: null }],
    'contract §6: the change\'s seq in the store\'s log, the status after, none before a create')

  await rejectsWith(t, service.create(scope, 'posts', { _slug: 'hello-world', title: 'Again' }), 'CONFLICT', /hello-world/)
  const draft = await service.create(scope, 'posts', { _slug: 'd', _status: 'draft', title: 'D' })
  t.equal(draft.entry.status, 'draft')
})

t.test('create: unique fields, and the 409 wins over a unique clash with the same slug', async t => {
  const { service, store } = setup()
  await service.create(scope, 'posts', { _slug: 'a', title: 'A', code: 'X' })
  const clash = await rejectsWith(t, service.create(scope, 'posts', { _slug: 'b', title: 'B', code: 'X' }), 'VALIDATION_FAILED')
  t.same(clash?.errors, ["code: must be unique; the entry 'a' already has this value"])
  await rejectsWith(t, service.create(scope, 'posts', { _slug: 'a', title: 'A2', code: 'X' }), 'CONFLICT')
  t.notOk(store.calls.some(c => c.startsWith('findByValue') || c.startsWith('get ')), 'no read ahead: the store decides both rules in the write')
  t.equal(await store.get(scope, 'posts', 'b'), undefined, 'the clash stored nothing')
  t.equal((await store.get(scope, 'posts', 'a'))?.data.title, 'A', 'the taken slug kept its entry')
  await service.create(scope, 'posts', { _slug: 'c', title: 'C', code: 'Y' })
  await service.create(scope, 'posts', { _slug: 'e', title: 'E' })
  await service.create(scope, 'posts', { _slug: 'f', title: 'F' })
  t.pass('absent unique values do not clash')
  const other: Scope = { locale: 'de', environment: 'default' }
  await service.create(other, 'posts', { _slug: 'b', title: 'B', code: 'X' })
  t.pass('unique is per locale')
})

t.test('concurrent creates of one slug: exactly one succeeds', async t => {
  const { service, store, events } = setup()
  const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) =>
    service.create(scope, 'posts', { _slug: 'same', title: `T${i}` })))
  const ok = results.filter(r => r.status === 'fulfilled')
  const conflicts = results.filter(r => r.status === 'rejected' && (r.reason as CmsError).code === 'CONFLICT')
  t.equal(ok.length, 1)
  t.equal(conflicts.length, 19)
  t.equal((await store.get(scope, 'posts', 'same'))?.data.title, (ok[0] as PromiseFulfilledResult<{ entry: StoredEntry }>).value.entry.data.title, 'the one answered 201 is the one stored')
  t.equal(events.length, 1)
})

t.test('concurrent creates with one unique value: exactly one succeeds', async t => {
  const { service } = setup()
  const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) =>
    service.create(scope, 'posts', { _slug: `s${i}`, title: 'T', code: 'same' })))
  t.equal(results.filter(r => r.status === 'fulfilled').length, 1)
  t.equal(results.filter(r => r.status === 'rejected' && (r.reason as CmsError).code === 'VALIDATION_FAILED').length, 19)
})

t.test('writes to one collection are in flight together (the store shares their commit)', async t => {
  const { service, store } = setup()
  const results = await Promise.all(Array.from({ length: 10 }, async (_, i) =>
    await service.create(scope, 'posts', { _slug: `s${i}`, title: 'T', code: `C${i}` })))
  t.equal(results.length, 10)
  t.ok(store.maxInFlight > 1, `${store.maxInFlight} writes were in flight at once`)
})

t.test('concurrent patches of one entry: applied one after the other, none lost', async t => {
  const { service, store } = setup()
  await service.create(scope, 'posts', { _slug: 'p', title: 'T', seo: {} })
  await Promise.all(Array.from({ length: 20 }, async (_, i) =>
    await service.patch(scope, 'posts', 'p', { seo: { [`k${i}`]: i } })))
  t.equal(Object.keys((await store.get(scope, 'posts', 'p'))?.data.seo as object).length, 20)
  t.equal(store.maxInFlight, 1, 'writes to one entry never overlap')
})

t.test('a write in flight is seen by the next create of the same slug', async t => {
  const { service, store } = setup()
  const first = service.create(scope, 'posts', { _slug: 'p', title: 'T' })
  const second = service.create(scope, 'posts', { _slug: 'p', title: 'U' })
  await first
  await rejectsWith(t, second, 'CONFLICT')
  t.equal((await store.get(scope, 'posts', 'p'))?.data.title, 'T')
})

t.test('no collection lock: writes to different entries run their steps side by side', async t => {
  const store = new MemoryStore()
  let inside = 0
  let overlapped = false
  const references = recordingReferences(store, [], {
    check: async () => {
      inside++
      if (inside > 1) overlapped = true
      await new Promise(resolve => setTimeout(resolve, 5))
      inside--
      return []
    }
  })
  const service = contentService([postsModel()], store, [], { references })
  await Promise.all([
    service.create(scope, 'posts', { _slug: 'a', title: 'A' }),
    service.create(scope, 'posts', { _slug: 'b', title: 'B' }),
    service.create({ locale: null, environment: 'staging' }, 'posts', { _slug: 'a', title: 'A' })
  ])
  t.ok(overlapped, 'the three writes ran side by side')
})

t.test('PUT replaces the fields; readonly and auto fields left out are kept', async t => {
  const { service, events } = setup()
  const created = await service.create(scope, 'posts', { _slug: 'p', _status: 'draft', title: 'Old', code: 'C', tags: ['a'], seo: { title: 'S' } })
  const uid = created.entry.data.uid
  events.length = 0

  await rejectsWith(t, service.update(scope, 'nope', 'p', { _status: 'bad' }), 'NOT_FOUND', /Collection/)
  await rejectsWith(t, service.update(scope, 'posts', 'a..b', {}), 'BAD_REQUEST', /path characters/)
  await rejectsWith(t, service.update(scope, 'posts', 'missing', { _status: 'bad' }), 'BAD_REQUEST', /_status/)
  await rejectsWith(t, service.update(scope, 'posts', 'missing', { title: 'x' }), 'NOT_FOUND', /Entry 'missing'/)
  await rejectsWith(t, service.update(scope, 'posts', 'p', 'text'), 'BAD_REQUEST')

  const put = await service.update(scope, 'posts', 'p', { _slug: 'ignored', title: 'New', tags: 'c' })
  t.equal(put.entry.slug, 'p', '_slug in the body is ignored')
  t.equal(put.entry.status, 'draft', 'absent _status keeps the stored one')
  t.same(put.entry.data, { title: 'New', uid, tags: ['c'] }, 'fields left out are gone, except readonly/auto ones')
  t.equal(put.entry.createdAt, created.entry.createdAt)
  t.not(put.entry.updatedAt, created.entry.updatedAt)
  t.strictSame(events, [{ event: 'content.updated', collection: 'posts', slug: 'p', locale: null, environment: 'default', seq: 2, status: 'draft', previous_status: 'draft' }])

  const readonly = await rejectsWith(t, service.update(scope, 'posts', 'p', { uid: 'changed', title: 1 }), 'VALIDATION_FAILED')
  t.same(readonly?.errors, ['uid: is readonly', 'title: is required'], 'readonly and schema problems together')

  const published = await service.update(scope, 'posts', 'p', { _status: 'published', title: 'New', uid })
  t.equal(published.entry.status, 'published')
  t.equal(published.entry.data.uid, uid, 'sending the same readonly value is fine')

  await service.create(scope, 'posts', { _slug: 'q', title: 'Q', code: 'QQ' })
  const clash = await rejectsWith(t, service.update(scope, 'posts', 'p', { title: 'x', code: 'QQ' }), 'VALIDATION_FAILED')
  t.match(clash?.errors, [/^code: must be unique/])
  await service.update(scope, 'posts', 'q', { title: 'Q2', code: 'QQ' })
  t.pass('the entry itself does not clash with its own unique value')
})

t.test('PATCH merges into the stored entry, then follows PUT', async t => {
  const { service, events } = setup()
  const created = await service.create(scope, 'posts', { _slug: 'p', title: 'T', code: 'C', tags: ['a', 'b'], seo: { title: 'S', description: 'D' } })
  events.length = 0
  await rejectsWith(t, service.patch(scope, 'posts', 'missing', { _status: 'nope' }), 'BAD_REQUEST', /_status/)
  await rejectsWith(t, service.patch(scope, 'posts', 'missing', {}), 'NOT_FOUND')
  await rejectsWith(t, service.patch(scope, 'posts', 'p', ['x']), 'BAD_REQUEST', /JSON object/)

  const patched = await service.patch(scope, 'posts', 'p', { seo: { description: null }, code: null, tags: 'c', _slug: 'zzz', _created_at: 'x' })
  t.same(patched.entry.data, { title: 'T', uid: created.entry.data.uid, tags: ['c'], seo: { title: 'S' } })
  t.equal(patched.entry.slug, 'p')
  t.equal(patched.entry.status, 'published')

  const drafted = await service.patch(scope, 'posts', 'p', { _status: 'draft' })
  t.equal(drafted.entry.status, 'draft')
  t.same(drafted.entry.data, patched.entry.data, 'only the status changed')
  const kept = await service.patch(scope, 'posts', 'p', { _status: null })
  t.equal(kept.entry.status, 'draft', 'removing _status keeps the stored one')

  const bad = await rejectsWith(t, service.patch(scope, 'posts', 'p', { title: null, uid: 'new' }), 'VALIDATION_FAILED')
  t.same(bad?.errors, ['uid: is readonly', 'title: is required'])
  const restored = await service.patch(scope, 'posts', 'p', { uid: null })
  t.equal(restored.entry.data.uid, created.entry.data.uid, 'a removed readonly field keeps its stored value, as with PUT')
  t.equal(events.length, 4)
  t.ok(events.every(e => e.event === 'content.updated'))
  t.strictSame(events.map(e => [e.previous_status, e.status]), [['published', 'published'], ['published', 'draft'], ['draft', 'draft'], ['draft', 'draft']],
    'the unpublish is an update from published to draft (contract §6)')
  t.strictSame(events.map(e => e.seq), [2, 3, 4, 5], 'each write\'s own seq')
})

t.test('an event\'s seq is its change\'s in the store\'s log', async t => {
  const { service, store, events } = setup()
  await Promise.all(['a', 'b', 'c'].map(async slug => await service.create(scope, 'posts', { _slug: slug, title: slug })))
  await service.update(scope, 'posts', 'b', { title: 'B', _status: 'draft' })
  await service.remove(scope, 'posts', 'a')
  const records = (await store.changes.since(0, 10, { environment: 'default', locale: null })).records
  t.strictSame(records.map(r => [r.seq, r.slug, r.op, r.status]), [[3, 'c', 'upsert', 'published'], [4, 'b', 'upsert', 'draft'], [5, 'a', 'delete', null]])
  t.strictSame(events.slice(2).map(e => [e.seq, e.slug, e.event, e.status]), [[3, 'c', 'content.created', 'published'], [4, 'b', 'content.updated', 'draft'], [5, 'a', 'content.deleted', null]])
  t.strictSame(events.slice(0, 2).map(e => [e.seq, e.slug]), [[1, 'a'], [2, 'b']], 'concurrent creates: each its own seq')
})

t.test('DELETE', async t => {
  const { service, store, events } = setup()
  await service.create(scope, 'posts', { _slug: 'p', title: 'T' })
  events.length = 0
  await rejectsWith(t, service.remove(scope, 'nope', 'p'), 'NOT_FOUND', /Collection/)
  await rejectsWith(t, service.remove(scope, 'posts', '../etc'), 'BAD_REQUEST')
  await rejectsWith(t, service.remove(scope, 'posts', 'missing'), 'NOT_FOUND', /Entry/)
  await service.remove(scope, 'posts', 'p')
  t.equal(await store.get(scope, 'posts', 'p'), undefined)
  t.strictSame(events, [{ event: 'content.deleted', collection: 'posts', slug: 'p', locale: null, environment: 'default', seq: 2, status: null, previous_status: 'published' }],
    'a delete: no status after it')
  await rejectsWith(t, service.remove(scope, 'posts', 'p'), 'NOT_FOUND')
})

t.test('events carry the scope', async t => {
  const { service, events } = setup()
  const s: Scope = { locale: 'fr', environment: 'staging' }
  await service.create(s, 'posts', { _slug: 'p', title: 'T' })
  await service.update(s, 'posts', 'p', { title: 'U' })
  await service.remove(s, 'posts', 'p')
  t.same(events.map(e => [e.event, e.locale, e.environment]), [
    ['content.created', 'fr', 'staging'], ['content.updated', 'fr', 'staging'], ['content.deleted', 'fr', 'staging']
  ])
})

t.test('each step by name, in the order of the rules', async t => {
  const log: string[] = []
  const store = new MemoryStore(log)
  const events: ContentEvent[] = []
  const service = contentService([postsModel()], store, events, {
    references: recordingReferences(store, log),
    cache: new RecordingCache(log),
    emit: e => { events.push(e); log.push(`emit ${e.event}`) }
  })

  const bad = await rejectsWith(t, service.create(scope, 'posts', { _slug: 'x', title: 'dangling', code: 'C' }), 'VALIDATION_FAILED')
  t.same(bad?.errors, ['author: no such entry'])
  t.same(log, ['check dangling', 'findByValue posts.code', 'get posts/x'], 'rule 9 failed: rules 8 (unique, slug) read ahead to answer first; a failed check stores nothing')
  t.same(events, [])
  log.length = 0

  const created = await service.create(scope, 'posts', { _slug: 'x', title: 'A', code: 'C' })
  t.equal(created.entry.data.title, 'A!', 'the asset URL step shapes what is stored')
  t.same(log, [
    'check A', 'relativeAssetUrls', 'create posts/x',
    'invalidate default/posts', 'updateIndex create x entry=A! previous=null', 'emit content.created'
  ], 'create rules 9, 10 (asset URLs, store deciding rule 8 in the write, cache), 11, 12: references hold, so nothing is read ahead')
  log.length = 0
  await service.update(scope, 'posts', 'x', { title: 'B', code: 'C' })
  t.same(log, [
    'get posts/x', 'check B', 'relativeAssetUrls', 'update posts/x',
    'invalidate default/posts', 'updateIndex update x entry=B! previous=A!', 'emit content.updated'
  ], 'update rules 4, 6 (references; unique decided in the write), 7, 8')
  log.length = 0
  await rejectsWith(t, service.update(scope, 'posts', 'x', { title: 'dangling', code: 'C' }), 'VALIDATION_FAILED')
  t.same(log, ['get posts/x', 'check dangling', 'findByValue posts.code'], 'a failed reference check reads the unique rule ahead, to answer it first')
  log.length = 0
  await service.remove(scope, 'posts', 'x')
  t.same(log, ['get posts/x', 'delete posts/x', 'updateIndex delete x entry=null previous=B!', 'invalidate default/posts', 'emit content.deleted'],
    'delete: the entry, then rules 4 (the delete), 3 (the index, once the delete has committed) and 4 (cache, event)')
  t.equal(events.length, 3)
})

t.test('the spec\'s order of answers: a unique clash and a taken slug come before the reference check', async t => {
  const store = new MemoryStore()
  const service = contentService([postsModel()], store, [], { references: recordingReferences(store, []) })
  await service.create(scope, 'posts', { _slug: 'a', title: 'A', code: 'X' })
  const clash = await rejectsWith(t, service.create(scope, 'posts', { _slug: 'b', title: 'dangling', code: 'X' }), 'VALIDATION_FAILED')
  t.same(clash?.errors, ["code: must be unique; the entry 'a' already has this value"], 'rule 8 before rule 9')
  await rejectsWith(t, service.create(scope, 'posts', { _slug: 'a', title: 'dangling' }), 'CONFLICT')
  const update = await rejectsWith(t, service.update(scope, 'posts', 'a', { title: 'dangling', code: 'Y' }), 'VALIDATION_FAILED')
  t.same(update?.errors, ['author: no such entry'])
})

t.test('a failing step after the write fails the request and emits no event', async t => {
  const store = new MemoryStore()
  const events: ContentEvent[] = []
  const references = recordingReferences(store, [], { updateIndex: () => { throw new Error('index unavailable') } })
  const service = contentService([postsModel()], store, events, { references })
  await t.rejects(service.create(scope, 'posts', { _slug: 'x', title: 'A' }), /index unavailable/)
  t.same(events, [])
})

t.test('a read made before a write that discarded its collection is not kept by the cache', async t => {
  let gate: Promise<void> | null = null
  /** Its next read answers what it read only once `gate` opens. */
  class SlowStore extends MemoryStore {
    override async get (s: Scope, collection: string, slug: string): Promise<StoredEntry | undefined> {
      const entry = await super.get(s, collection, slug)
      const wait = gate
      gate = null
      if (wait !== null) await wait
      return entry
    }
  }
  const store = new SlowStore()
  const cache = new ResponseCache({ max: 100 })
  const service = contentService([postsModel()], store, [], { cache })
  await service.create(scope, 'posts', { _slug: 'a', title: 'Old' })
  let open!: () => void
  gate = new Promise<void>(resolve => { open = resolve })
  const reading = service.get(scope, 'posts', 'a', anonymous)
  await service.update(scope, 'posts', 'a', { title: 'New' })
  open()
  t.match(String((await reading).body), /"Old"/, 'the read answers what it read')
  t.equal(cache.size, 0, 'but it is not kept')
  t.match(String((await service.get(scope, 'posts', 'a', anonymous)).body), /"New"/)
  t.equal(cache.size, 1, 'a read after the write is kept')
})

t.test('get: visibility, ETag of the exact body', async t => {
  const { service } = setup()
  await service.create(scope, 'posts', { _slug: 'pub', title: 'P' })
  await service.create(scope, 'posts', { _slug: 'draft', _status: 'draft', title: 'D' })
  const pub = await service.get(scope, 'posts', 'pub', anonymous)
  t.equal(pub.etag, etagOf(pub.body))
  t.match(pub.etag, /^"[0-9a-f]{16}"$/)
  t.equal(JSON.parse(String(pub.body))._slug, 'pub')
  t.equal((await service.get(scope, 'posts', 'draft', admin)).body.includes('"_status":"draft"'), true, 'authenticated callers see drafts')
  await rejectsWith(t, service.get(scope, 'posts', 'draft', anonymous), 'NOT_FOUND')
  await rejectsWith(t, service.get(scope, 'posts', 'missing', admin), 'NOT_FOUND')
  await rejectsWith(t, () => service.get(scope, 'nope', 'pub', admin), 'NOT_FOUND')
  await rejectsWith(t, () => service.get(scope, 'posts', 'a\\b', admin), 'BAD_REQUEST')
  t.equal(JSON.parse(String((await service.get(scope, 'posts', 'PUB', admin)).body))._slug, 'pub', 'the path slug is normalized')
  t.equal((await service.get(scope, 'posts', 'pub', admin)).etag, pub.etag, 'same entry, same tag')
  await service.update(scope, 'posts', 'pub', { title: 'P2' })
  t.not((await service.get(scope, 'posts', 'pub', admin)).etag, pub.etag, 'a change, a new tag')
})

t.test('list: the bytes JSON.stringify gives, whether pooled, kept by the cache, or neither', async t => {
  const { service: uncached, store } = setup()
  // The last title takes the whole page past Node's own pooling threshold (half Buffer.poolSize:
  // 4 KB on Node 20, 32 KB on Node 24); the pages of two stay under it.
  const titles = ['plain', 'Zoë', '€ 😀', 'x'.repeat(3000), `${'é'.repeat(2000)}😀`, 'x'.repeat(Buffer.poolSize >>> 1)]
  for (const [i, title] of titles.entries()) await uncached.create(scope, 'posts', { _slug: `p${i}`, title })
  // The same page through `_fields` (serialized whole, not from kept texts), under its own cache key.
  const expected = async (service: ContentService, query: Record<string, unknown>): Promise<string> => {
    const projected = { ...query, _fields: '_slug,title,code,uid,tags,seo' }
    const page = (await service.list(scope, 'posts', projected, new URLSearchParams(projected).toString(), admin)).body.toString()
    return JSON.stringify(JSON.parse(page))
  }
  const check = async (label: string, query: Record<string, string>, pooled: boolean, service = uncached): Promise<Buffer> => {
    const rendered = await service.list(scope, 'posts', query, new URLSearchParams(query as Record<string, string>).toString(), admin)
    const json = await expected(service, query)
    t.equal(rendered.body.toString(), json, `${label}: the text`)
    t.ok(rendered.body.equals(Buffer.from(json)), `${label}: exactly its UTF-8 bytes`)
    t.equal(rendered.etag, etagOf(rendered.body), `${label}: the ETag of those bytes`)
    t.equal(rendered.release !== undefined, pooled, `${label}: ${pooled ? '' : 'not '}pooled`)
    rendered.release?.()
    return rendered.body
  }
  await check('a large page', {}, true)
  await check('a small page', { _per_page: '2' }, false)
  await check('a small non-ASCII page', { _page: '2', _per_page: '2' }, false)
  await check('empty', { _page: '9' }, false)
  const cache = new ResponseCache({ max: 100 })
  const cached = contentService([postsModel()], store, [], { cache })
  const kept = await check('kept by the cache', {}, false, cached)
  t.equal(cache.stats.stores, 2, 'the page and its expected text, under their own keys')
  t.equal((await cached.list(scope, 'posts', {}, '', admin)).body, kept, 'and served from it')
})

t.test('slugCheck: the six rules', async t => {
  const { service } = setup()
  await service.create(scope, 'posts', { _slug: 'taken', title: 'T' })
  await service.create(scope, 'posts', { _slug: 'hidden', _status: 'draft', title: 'T' })
  t.same(await service.slugCheck(scope, 'posts', 'Fresh Slug', undefined), { valid: true, normalized: 'fresh-slug', available: true, error: null })
  t.same(await service.slugCheck(scope, 'posts', 'Taken', undefined), { valid: true, normalized: 'taken', available: false, error: null })
  t.same(await service.slugCheck(scope, 'posts', 'hidden', undefined), { valid: true, normalized: 'hidden', available: false, error: null }, 'a draft takes its slug')
  t.same(await service.slugCheck(scope, 'posts', 'taken', ' taken '), { valid: true, normalized: 'taken', available: true, error: null }, 'exclude (trimmed)')
  t.same(await service.slugCheck(scope, 'posts', 'taken', '  '), { valid: true, normalized: 'taken', available: false, error: null }, 'a blank exclude is ignored')
  t.same((await service.slugCheck({ locale: 'de', environment: 'default' }, 'posts', 'taken', undefined)).available, true, 'per locale')
  t.same((await service.slugCheck({ locale: null, environment: 'staging' }, 'posts', 'taken', undefined)).available, true, 'per environment')
  t.same(await service.slugCheck(scope, 'nope', 'fresh', undefined), { valid: true, normalized: 'fresh', available: false, error: COLLECTION_NOT_FOUND })
  const empty = await service.slugCheck(scope, 'posts', '   ', undefined)
  t.same([empty.valid, empty.available, empty.normalized], [false, false, ''])
  t.match(empty.error, /empty/)
  t.match((await service.slugCheck(scope, 'posts', undefined, undefined)).error, /empty/)
  const path = await service.slugCheck(scope, 'posts', 'a/b', 'a/b')
  t.same([path.valid, path.available], [false, false])
  t.match(path.error, /path characters/)
  const chars = await service.slugCheck(scope, 'posts', '!!!', undefined)
  t.same([chars.valid, chars.available, chars.normalized], [false, false, '!!!'])
  t.match(chars.error, /only contain/)
  t.same((await service.slugCheck(scope, 'posts', '-', '')).available, false, 'normalizes to empty')
})

// ---- another process writing between the read and the write (EntryInput.expected) -------------

/** Writes the entry behind the pipeline's back, as another replica would: the store directly, no precondition. */
async function writeElsewhere (store: MemoryStore, slug: string, change: (data: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
  const stored = await store.get(scope, 'posts', slug) as StoredEntry
  await store.update(scope, 'posts', { slug, status: stored.status, data: change(structuredClone(stored.data)) })
}

t.test('an update refused as stale is run again from its read: both changes are kept', async t => {
  const { service, store, events } = setup()
  await service.create(scope, 'posts', { _slug: 'p', title: 'T', seo: { title: 'old' } })
  events.length = 0
  let raced = 0
  store.beforeUpdate = async (_scope, _collection, input) => {
    if (input.expected === undefined || raced++ > 0) return
    await writeElsewhere(store, 'p', data => ({ ...data, tags: ['b'] }))
  }
  const written = await service.patch(scope, 'posts', 'p', { seo: { description: 'mine' } })
  t.same(written.entry.data.tags, ['b'], 'the other write is kept')
  t.same(written.entry.data.seo, { title: 'old', description: 'mine' }, 'and this one merged into it')
  t.same((await store.get(scope, 'posts', 'p'))?.data, written.entry.data)
  t.equal(store.calls.filter(c => c === 'update posts/p').length, 3, 'the other write, the refused try, the retry')
  t.equal(events.length, 1, 'one event: only the write that committed is announced')
  t.same(events.map(e => e.seq), [(await store.changes.latestSeq())], 'the committed write\'s seq')
})

t.test('an update that keeps losing gives up with 409 once its retry time is over', async t => {
  const store = new MemoryStore()
  const events: ContentEvent[] = []
  const service = contentService([postsModel()], store, events, { updateRetryMs: 300 })
  await service.create(scope, 'posts', { _slug: 'p', title: 'T' })
  events.length = 0
  let tries = 0
  store.beforeUpdate = async (_scope, _collection, input) => {
    if (input.expected === undefined) return
    tries++
    await writeElsewhere(store, 'p', data => ({ ...data, title: `other ${tries}` }))
  }
  const started = Date.now()
  await rejectsWith(t, service.patch(scope, 'posts', 'p', { title: 'mine' }), 'CONFLICT', /changed by another request while this one was applied; try again/)
  const took = Date.now() - started
  t.ok(took >= 200 && took < 1000, `tried for its retry time, not longer (${took} ms)`)
  t.ok(tries > 8, `tried again and again within it (${tries} tries)`)
  t.equal((await store.get(scope, 'posts', 'p'))?.data.title, `other ${tries}`, 'nothing of the refused update is stored')
  t.same(events, [], 'no event')
})

t.test('the wait between tries: random, below a cap doubling from 2 ms to 64 ms', async t => {
  for (const [attempt, cap] of [[1, 2], [2, 4], [5, 32], [6, 64], [20, 64]] as const) {
    const waits = Array.from({ length: 200 }, () => updateRetryDelay(attempt))
    t.ok(waits.every(w => w >= 0 && w < cap), `attempt ${attempt}: below ${cap} ms`)
    t.ok(Math.max(...waits) > cap / 2, `attempt ${attempt}: spread over its range`)
  }
})

t.test('a publish refused because the draft was saved again since publishes the newer draft', async t => {
  const { service, store, events } = setup()
  await service.create(scope, 'posts', { _slug: 'p', title: 'live' })
  await service.putDraft(scope, 'posts', 'p', { title: 'draft 1' })
  events.length = 0
  let raced = 0
  store.beforeUpdate = async (_scope, _collection, input) => {
    if (input.expected?.draft === undefined || raced++ > 0) return
    await store.putDraft(scope, 'posts', 'p', { ...input.expected.draft.data, title: 'draft 2' })
  }
  const written = await service.publishDraft(scope, 'posts', 'p')
  t.equal(written.entry.data.title, 'draft 2', 'the draft saved in between is what is published, not dropped')
  t.equal(await store.getDraft(scope, 'posts', 'p'), undefined, 'and it is gone')
  t.equal(events.length, 1)
})

t.test('on one process no update is ever retried: every update names what it read, and it holds', async t => {
  const { service, store } = setup()
  await service.create(scope, 'posts', { _slug: 'p', title: 'T', tags: [] })
  const refused: string[] = []
  store.beforeUpdate = async (_scope, _collection, input) => { if (input.expected === undefined) refused.push('no precondition') }
  await Promise.all(['a', 'b', 'c'].map(async tag => await service.patch(scope, 'posts', 'p', { title: tag })))
  await service.update(scope, 'posts', 'p', { title: 'put' })
  t.same(refused, [])
  t.equal(store.calls.filter(c => c === 'update posts/p').length, 4, 'one store update per request')
})
