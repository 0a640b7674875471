// Locales and environments over time (contract §14, lib/store/layout.ts): the moves the settings'
// changes give, and, on every store (test/fixtures/stores.ts), what reopening with other settings
// does to entries, versions, drafts, schedules and the change log.
import path from 'node:path'
import t, { type Test } from 'tap'
import { layoutMoves, layoutOf, layoutText, parseLayout } from '../../../lib/store/layout.js'
import type { StoreLogger, StoreOptions } from '../../../lib/store/index.js'
import type { ChangeRecord } from '../../../types/changes.js'
import type { Scope } from '../../../types/scope.js'
import type { ContentStore, EntryInput } from '../../../types/store.js'
import { tempDir } from '../../helper.js'
import { allEntries, storeFactories } from '../../fixtures/stores.js'

const START = Date.parse('2026-03-01T10:00:00.000Z')
const at = (seconds: number): string => new Date(START + seconds * 1000).toISOString()
const scopeOf = (locale: string | null, environment = 'default'): Scope => ({ environment, locale })
const input = (slug: string, data: Record<string, unknown>, extra: Partial<EntryInput> = {}): EntryInput =>
  ({ slug, status: 'published', data, keepVersions: 10, ...extra })

t.test('layoutMoves', async t => {
  const off = layoutOf({})
  t.same(off, { locale: null, environment: 'default' }, 'unset settings')
  t.same(layoutOf({ locales: ['en', 'de'], environments: ['main', 'staging'] }), { locale: 'en', environment: 'main' }, 'the first of each')
  t.same(layoutMoves(null, off), [], 'a store that remembers nothing, opened with nothing set')
  t.same(layoutMoves(off, off), [])
  t.same(layoutMoves(null, { locale: 'en', environment: 'default' }), [{ dimension: 'locale', from: '', to: 'en' }], 'remembering nothing is unset settings')
  t.same(layoutMoves(off, { locale: 'en', environment: 'default' }), [{ dimension: 'locale', from: '', to: 'en' }], 'locales on')
  t.same(layoutMoves({ locale: 'de', environment: 'default' }, off), [{ dimension: 'locale', from: 'de', to: '' }], 'locales off')
  t.same(layoutMoves({ locale: 'en', environment: 'default' }, { locale: 'de', environment: 'default' }), [], 'another default, on in both: nothing moves')
  t.same(layoutMoves(off, { locale: null, environment: 'main' }), [{ dimension: 'environment', from: 'default', to: 'main' }], 'environments on')
  t.same(layoutMoves({ locale: null, environment: 'main' }, off), [{ dimension: 'environment', from: 'main', to: 'default' }], 'environments off')
  t.same(layoutMoves({ locale: null, environment: 'main' }, { locale: null, environment: 'prod' }), [], 'another default environment: nothing moves')
  t.same(layoutMoves({ locale: 'en', environment: 'main' }, off), [
    { dimension: 'environment', from: 'main', to: 'default' },
    { dimension: 'locale', from: 'en', to: '' }
  ], 'environments first, then locales')
  const layout = { locale: 'en', environment: 'main' }
  t.same(parseLayout(layoutText(layout)), layout, 'stored text, read back')
  t.same(parseLayout(layoutText(off)), off)
  for (const text of [null, undefined, '', 'not json', '{"locale":3,"environment":"x"}', '{"locale":null}']) t.equal(parseLayout(text), null, `unreadable: ${String(text)}`)
})

/** Every record of the log a scope reads after `afterSeq`. */
async function recordsOf (store: ContentStore, scope: Scope, afterSeq: number): Promise<ChangeRecord[]> {
  const out: ChangeRecord[] = []
  for (let after = afterSeq; ;) {
    const page = await store.changes.since(after, 100, { environment: scope.environment, locale: scope.locale })
    out.push(...page.records)
    after = page.upTo
    if (!page.more) return out
  }
}

/** What a store holds for one entry key, as comparable values. */
async function held (store: ContentStore, scope: Scope, slug: string): Promise<unknown> {
  const entry = await store.get(scope, 'posts', slug)
  const versions = await store.versions(scope, 'posts', slug, 50, 0, 50)
  const draft = await store.getDraft(scope, 'posts', slug)
  return {
    entry: entry === undefined ? null : { status: entry.status, data: entry.data },
    versions: versions.items.map(v => v.version),
    draft: draft?.data ?? null
  }
}

for (const factory of storeFactories) {
  t.test(`store=${factory.name}`, async t => {
    const open = async (t: Test, dataDir: string, options: Partial<StoreOptions> = {}): Promise<ContentStore> => {
      let ms = START
      const store = factory.create({ dataDir, clock: () => new Date(ms += 1000), ...options })
      await store.open()
      t.teardown(() => store.close())
      return store
    }

    /** Writes, under `scope`: a published entry with two versions, a pending draft and a schedule; a draft entry with a schedule. */
    const writeEverything = async (store: ContentStore, scope: Scope): Promise<void> => {
      await store.create(scope, 'posts', input('pub', { title: 'One' }))
      await store.update(scope, 'posts', input('pub', { title: 'Hello' }))
      await store.putDraft(scope, 'posts', 'pub', { title: 'Hello, soon' })
      await store.create(scope, 'posts', input('dr', { title: 'Draft' }, { status: 'draft' }))
      await store.addSchedule({ id: 'sched-pub', scope, collection: 'posts', slug: 'pub', action: 'unpublish', at: at(100) })
      await store.addSchedule({ id: 'sched-dr', scope, collection: 'posts', slug: 'dr', action: 'publish', at: at(200) })
    }

    const everything = {
      pub: { entry: { status: 'published', data: { title: 'Hello' } }, versions: [2, 1], draft: { title: 'Hello, soon' } },
      dr: { entry: { status: 'draft', data: { title: 'Draft' } }, versions: [1], draft: null }
    }
    const nothing = { entry: null, versions: [], draft: null }

    const checkHeld = async (t: Test, store: ContentStore, scope: Scope, what: string): Promise<void> => {
      t.same(await held(store, scope, 'pub'), everything.pub, `${what}: the published entry, its versions and draft`)
      t.same(await held(store, scope, 'dr'), everything.dr, `${what}: the draft entry`)
      t.same([(await store.getSchedule('sched-pub'))?.scope, (await store.getSchedule('sched-dr'))?.scope], [scope, scope], `${what}: the schedules`)
    }

    /** The moves' change records: for each moved entry a tombstone at its old key, then an upsert at its new one. */
    const checkAnnounced = async (t: Test, store: ContentStore, from: Scope, to: Scope, afterSeq: number, slugs: string[]): Promise<void> => {
      const gone = await recordsOf(store, from, afterSeq)
      const came = await recordsOf(store, to, afterSeq)
      t.same(gone.map(r => [r.slug, r.op]).sort(), slugs.map(s => [s, 'delete']).sort(), 'tombstones at the old keys')
      t.same(came.map(r => [r.slug, r.op]).sort(), slugs.map(s => [s, 'upsert']).sort(), 'upserts at the new keys')
      for (const slug of slugs) {
        const tombstone = gone.find(r => r.slug === slug) as ChangeRecord
        const upsert = came.find(r => r.slug === slug) as ChangeRecord
        t.ok(tombstone.seq > afterSeq && tombstone.seq < upsert.seq, `${slug}: the tombstone, then the upsert, with fresh seqs`)
      }
    }

    t.test('locales off → on → off → on', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const plain = scopeOf(null)
      const en = scopeOf('en')
      const de = scopeOf('de')
      const on = { locales: ['en', 'de'] }

      let store = await open(t, dataDir)
      await writeEverything(store, plain)
      let seq = await store.changes.latestSeq()
      let fingerprint = await store.contentFingerprint()
      await store.close()

      store = await open(t, dataDir, on)
      await checkHeld(t, store, en, 'on: under the default locale')
      t.same(await held(store, plain, 'pub'), nothing, 'nothing left without a locale')
      t.same((await store.listSchedules('pending', {}, 0, 10)).items.map(s => s.scope), [en, en])
      t.same((await allEntries(store)).map(e => e.scope), [en, en], 'every entry moved')
      await checkAnnounced(t, store, plain, en, seq, ['dr', 'pub'])
      t.not(await store.contentFingerprint(), fingerprint, 'the fingerprint changed')
      await store.create(de, 'posts', input('pub', { title: 'Hallo' }))
      await store.create(de, 'posts', input('only-de', { title: 'Nur' }))
      await store.update(en, 'posts', input('pub', { title: 'Hello' }))
      seq = await store.changes.latestSeq()
      fingerprint = await store.contentFingerprint()
      await store.close()

      store = await open(t, dataDir)
      t.same(await held(store, plain, 'pub'), { ...everything.pub, versions: [3, 2, 1] }, 'off: the default locale\'s content, served with no locale')
      t.same(await held(store, plain, 'dr'), everything.dr)
      t.same(await held(store, plain, 'only-de'), nothing, 'another locale\'s content is not moved')
      t.same((await store.getSchedule('sched-pub'))?.scope, plain)
      await checkAnnounced(t, store, en, plain, seq, ['dr', 'pub'])
      t.not(await store.contentFingerprint(), fingerprint)
      await store.update(plain, 'posts', input('dr', { title: 'Draft' }, { status: 'draft' }))
      await store.close()

      store = await open(t, dataDir, on)
      t.same(await held(store, en, 'dr'), { ...everything.dr, versions: [2, 1] }, 'on again: under the default locale')
      t.same(await held(store, en, 'pub'), { ...everything.pub, versions: [3, 2, 1] })
      t.same(await held(store, de, 'pub'), { entry: { status: 'published', data: { title: 'Hallo' } }, versions: [1], draft: null }, 'the other locale\'s content is back')
      t.same((await held(store, de, 'only-de') as { entry: unknown }).entry, { status: 'published', data: { title: 'Nur' } })
      seq = await store.changes.latestSeq()
      fingerprint = await store.contentFingerprint()
      await store.close()

      store = await open(t, dataDir, { locales: ['de', 'en'] })
      t.equal(await store.changes.latestSeq(), seq, 'another default with locales on in both: nothing moves')
      t.equal(await store.contentFingerprint(), fingerprint)
      t.same((await held(store, en, 'pub') as { entry: unknown }).entry, everything.pub.entry)
    })

    t.test('environments off → on → off → on', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const plain = scopeOf(null)
      const main = scopeOf(null, 'main')
      const staging = scopeOf(null, 'staging')
      const on = { environments: ['main', 'staging'] }

      let store = await open(t, dataDir)
      await writeEverything(store, plain)
      let seq = await store.changes.latestSeq()
      await store.close()

      store = await open(t, dataDir, on)
      await checkHeld(t, store, main, 'on: under the default environment')
      t.same(await held(store, plain, 'pub'), nothing)
      t.same((await store.listSchedules('pending', { environment: 'main' }, 0, 10)).total, 2, 'listed under it')
      await checkAnnounced(t, store, plain, main, seq, ['dr', 'pub'])
      await store.create(staging, 'posts', input('pub', { title: 'Staged' }))
      seq = await store.changes.latestSeq()
      await store.close()

      store = await open(t, dataDir)
      await checkHeld(t, store, plain, 'off: the default environment\'s content')
      await checkAnnounced(t, store, main, plain, seq, ['dr', 'pub'])
      await store.close()

      store = await open(t, dataDir, on)
      await checkHeld(t, store, main, 'on again')
      t.same((await store.get(staging, 'posts', 'pub'))?.data, { title: 'Staged' }, 'the other environment\'s content is back')
    })

    t.test('both at once: environments first, then locales', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      let store = await open(t, dataDir)
      await writeEverything(store, scopeOf(null))
      await store.close()
      store = await open(t, dataDir, { locales: ['en'], environments: ['main'] })
      await checkHeld(t, store, scopeOf('en', 'main'), 'on')
      await store.close()
      store = await open(t, dataDir)
      await checkHeld(t, store, scopeOf(null), 'off')
    })

    t.test('a clash: the moved entry wins, the displaced one is kept as a version', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const plain = scopeOf(null)
      const en = scopeOf('en')
      const infos: Array<[object, string]> = []
      const log: StoreLogger = { info: (obj, msg) => { infos.push([obj, msg]) }, warn () {}, error () {} }

      // With locales off, content under 'en' is what an earlier time with locales on left.
      let store = await open(t, dataDir)
      await store.create(en, 'posts', input('a', { title: 'Target 1' }))
      await store.update(en, 'posts', input('a', { title: 'Target 2' }, { status: 'draft' }))
      await store.create(en, 'posts', input('t', { title: 'Target only' }))
      await store.putDraft(en, 'posts', 't', { title: 'Target draft' })
      await store.addSchedule({ id: 'target', scope: en, collection: 'posts', slug: 'a', action: 'publish', at: at(50) })
      await store.create(plain, 'posts', input('a', { title: 'Moved 1' }))
      await store.update(plain, 'posts', input('a', { title: 'Moved 2' }))
      await store.update(plain, 'posts', input('a', { title: 'Moved 3' }))
      await store.putDraft(plain, 'posts', 'a', { title: 'Moved draft' })
      await store.addSchedule({ id: 'moved', scope: plain, collection: 'posts', slug: 'a', action: 'unpublish', at: at(60) })
      // Versions only (a deleted entry) on the target side: the moved ones are numbered after them.
      await store.create(en, 'posts', input('gone', { title: 'Gone' }))
      await store.delete(en, 'posts', 'gone')
      await store.create(plain, 'posts', input('gone', { title: 'Back' }))
      const seq = await store.changes.latestSeq()
      await store.close()

      store = await open(t, dataDir, { locales: ['en'], log })
      t.same(await held(store, en, 'a'), { entry: { status: 'published', data: { title: 'Moved 3' } }, versions: [6, 5, 4, 3, 2, 1], draft: { title: 'Moved draft' } }, 'the moved entry, its draft, every version')
      t.match(await store.version(en, 'posts', 'a', 3, 50), { version: 3, status: 'draft', data: { title: 'Target 2' } }, 'the displaced entry, as the version after the target\'s')
      t.same((await store.version(en, 'posts', 'a', 2, 50))?.data, { title: 'Target 2' })
      t.same((await store.version(en, 'posts', 'a', 4, 50))?.data, { title: 'Moved 1' }, 'the moved versions after it')
      t.same((await store.version(en, 'posts', 'a', 6, 50))?.data, { title: 'Moved 3' })
      t.same(await held(store, en, 't'), { entry: { status: 'published', data: { title: 'Target only' } }, versions: [1], draft: { title: 'Target draft' } }, 'the target\'s other entries stay')
      t.same(await held(store, en, 'gone'), { entry: { status: 'published', data: { title: 'Back' } }, versions: [2, 1], draft: null })
      t.same((await store.listSchedules('pending', {}, 0, 10)).items.map(s => [s.id, s.scope]), [['target', en], ['moved', en]], 'the schedules of both')
      await checkAnnounced(t, store, plain, en, seq, ['a', 'gone'])
      t.same((await allEntries(store)).map(e => `${e.scope.locale ?? ''}:${e.entry.slug}`).sort(), ['en:a', 'en:gone', 'en:t'])
      t.equal(infos.filter(([, msg]) => /\bmoved\b/i.test(msg)).length, 1, 'one info line says what moved', { infos })
    })
  })
}
