// What only the file store has of the editorial side (types/editorial.ts): its files on disk,
// what a crash leaves of them and how open repairs it, and the layout moves' folders and journal.
// The rules every store follows are test/lib/store/editorial.test.ts's and layout.test.ts's.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { FileStore, type StoreLogger, type StoreOptions } from '../../../lib/store/index.js'
import { layoutText } from '../../../lib/store/layout.js'
import type { Scope } from '../../../types/scope.js'
import type { EntryInput } from '../../../types/store.js'
import { tempDir } from '../../helper.js'

const scope: Scope = { environment: 'default', locale: null }
const START = Date.parse('2026-03-01T10:00:00.000Z')

const input = (slug: string, data: Record<string, unknown>, extra: Partial<EntryInput> = {}): EntryInput =>
  ({ slug, status: 'published', data, ...extra })

function tickingClock (): () => Date {
  let ms = START
  return () => new Date(ms += 1000)
}

interface Logged { level: string, msg: string, obj: object }

function recorder (): { log: StoreLogger, lines: Logged[] } {
  const lines: Logged[] = []
  const at = (level: string) => (obj: object, msg: string) => { lines.push({ level, obj, msg }) }
  return { log: { info: at('info'), warn: at('warn'), error: at('error') }, lines }
}

async function open (t: Test, dataDir: string, options: Partial<StoreOptions> = {}): Promise<FileStore> {
  const store = new FileStore({ dataDir, clock: tickingClock(), ...options })
  await store.open()
  t.teardown(() => store.close())
  return store
}

const bucket = (dataDir: string, ...parts: string[]): string => path.join(dataDir, 'content', ...parts)
const lines = (file: string): Array<Record<string, unknown>> =>
  readFileSync(file, 'utf8').split('\n').filter(l => l !== '').map(l => JSON.parse(l) as Record<string, unknown>)

t.test('on disk: versions, drafts, schedules and the layout beside the entries, never taken for entries', async t => {
  const dataDir = tempDir(t)
  const { log, lines: logged } = recorder()
  const store = await open(t, dataDir, { log })
  await store.create(scope, 'posts', input('a', { title: 'v1' }, { keepVersions: 2 }))
  await store.update(scope, 'posts', input('a', { title: 'v2' }, { keepVersions: 2 }))
  await store.update(scope, 'posts', input('a', { title: 'v3' }, { keepVersions: 2 }))
  const fingerprint = await store.contentFingerprint()
  const draft = await store.putDraft(scope, 'posts', 'a', { title: 'next' })
  await store.addSchedule({ id: 'sched-1', scope, collection: 'posts', slug: 'a', action: 'publish', at: new Date(START + 60_000).toISOString() })
  await store.close()

  const dir = bucket(dataDir, 'default', 'posts', '_')
  t.same(readdirSync(dir).sort(), ['.drafts', '.versions', 'a.json'])
  t.match(JSON.parse(readFileSync(path.join(dir, 'a.json'), 'utf8')), { version: 3, data: { title: 'v3' } }, 'the newest version is the entry file')
  const versions = lines(path.join(dir, '.versions', 'a.jsonl'))
  t.same(versions.map(v => [v.version, v.floor, (v.data as { title: string }).title]), [[1, 0, 'v1'], [2, 1, 'v2']],
    'the older ones, a line each, appended by the write that replaced them; the floor says what that write dropped')
  t.same(JSON.parse(readFileSync(path.join(dir, '.drafts', 'a.json'), 'utf8')), { created_at: draft.createdAt, updated_at: draft.updatedAt, data: { title: 'next' } })
  const schedules = JSON.parse(readFileSync(bucket(dataDir, 'schedules.json'), 'utf8')) as { schedules: Array<Record<string, unknown>> }
  t.match(schedules.schedules, [{ id: 'sched-1', environment: 'default', locale: null, collection: 'posts', slug: 'a', status: 'pending', owner: null, lease_until: null }])
  t.equal(readFileSync(bucket(dataDir, 'layout.json'), 'utf8'), layoutText({ locale: null, environment: 'default' }), 'the layout it opened with')

  const again = await open(t, dataDir, { log })
  t.equal(await again.contentFingerprint(), fingerprint, 'the fingerprint counts entry files only')
  t.same((await again.versions(scope, 'posts', 'a', 10, 0, 10)).items.map(v => v.version), [3, 2], 'version 1 was dropped by the third write')
  t.notOk(logged.some(l => l.level !== 'info'), 'nothing skipped or repaired')
  await t.rejects(again.versions(scope, 'posts', '../a', 10, 0, 10), { code: 'BAD_REQUEST' }, 'a slug never becomes a path unchecked')
  await t.rejects(again.getDraft(scope, 'posts', 'A/b'), { code: 'BAD_REQUEST' })
})

t.test('versions: a file holding twice what it keeps is compacted to its live lines', async t => {
  const dataDir = tempDir(t)
  const store = await open(t, dataDir)
  await store.create(scope, 'posts', input('a', { n: 0 }, { keepVersions: 2 }))
  for (let n = 1; n <= 14; n++) await store.update(scope, 'posts', input('a', { n }, { keepVersions: 2 }))
  const file = path.join(bucket(dataDir, 'default', 'posts', '_'), '.versions', 'a.jsonl')
  t.ok(lines(file).length <= 2 * 2 + 8, 'bounded by twice the kept count and a little slack')
  t.same((await store.versions(scope, 'posts', 'a', 50, 0, 50)).items.map(v => v.version), [15, 14])
  t.same((await store.version(scope, 'posts', 'a', 15, 50))?.data, { n: 14 })
  await store.update(scope, 'posts', input('a', { n: 15 }, { keepVersions: 5 }))
  t.same((await store.versions(scope, 'posts', 'a', 50, 0, 50)).items.map(v => v.version), [16, 15, 14], 'a raised keep brings back nothing dropped')
})

t.test('versions: a torn last line is never read, and cut off before the next append', async t => {
  const dataDir = tempDir(t)
  const first = await open(t, dataDir)
  await first.create(scope, 'posts', input('a', { n: 1 }, { keepVersions: 10 }))
  await first.update(scope, 'posts', input('a', { n: 2 }, { keepVersions: 10 }))
  await first.close()
  const file = path.join(bucket(dataDir, 'default', 'posts', '_'), '.versions', 'a.jsonl')
  appendFileSync(file, '{"version":3,"status":"published","created_at":"2026-')

  const second = await open(t, dataDir)
  t.same((await second.versions(scope, 'posts', 'a', 10, 0, 10)).items.map(v => v.version), [2, 1], 'the torn line is no version')
  await second.update(scope, 'posts', input('a', { n: 3 }, { keepVersions: 10 }))
  t.same(lines(file).map(v => v.version), [1, 2], 'the append follows the whole lines')
  t.same((await second.version(scope, 'posts', 'a', 3, 10))?.data, { n: 3 })
})

t.test('versions: a crash before the entry write leaves no version of it; a versionless write keeps the one it replaced', async t => {
  const dataDir = tempDir(t)
  const first = await open(t, dataDir)
  await first.create(scope, 'posts', input('a', { n: 1 }, { keepVersions: 10 }))
  await first.create(scope, 'posts', input('b', { n: 1 }, { keepVersions: 10 }))
  const entryFile = path.join(bucket(dataDir, 'default', 'posts', '_'), 'a.json')
  const before = readFileSync(entryFile)
  await first.update(scope, 'posts', input('a', { n: 2 }, { keepVersions: 10 }))
  // b: a later write without a version landed; its older version stays.
  await first.update(scope, 'posts', input('b', { n: 2 }))
  await first.close()
  // As a crash after the change record and the replaced version's append, before the entry file's rename, leaves it.
  writeFileSync(entryFile, before)

  const second = await open(t, dataDir)
  t.same((await second.get(scope, 'posts', 'a'))?.data, { n: 1 })
  t.same((await second.versions(scope, 'posts', 'a', 10, 0, 10)).items.map(v => v.version), [1], 'no version of the write that never landed')
  t.same((await second.versions(scope, 'posts', 'b', 10, 0, 10)).items.map(v => v.version), [1], 'the version b\'s file was is kept')
  await second.update(scope, 'posts', input('a', { n: 3 }, { keepVersions: 10 }))
  t.same((await second.versions(scope, 'posts', 'a', 10, 0, 10)).items.map(v => v.version), [2, 1], 'numbering goes on from the kept ones')
  await second.close()
  const third = await open(t, dataDir)
  t.same((await third.versions(scope, 'posts', 'a', 10, 0, 10)).items.map(v => v.version), [2, 1], 'a matching newest version stays')
})

t.test('versions: a write whose entry file fails keeps no version', async t => {
  const dataDir = tempDir(t)
  const dir = bucket(dataDir, 'default', 'posts', '_')
  mkdirSync(path.join(dir, 'a.json', 'blocked'), { recursive: true })
  const store = await open(t, dataDir)
  await t.rejects(store.create(scope, 'posts', input('a', { n: 1 }, { keepVersions: 5 })))
  t.same(await store.versions(scope, 'posts', 'a', 5, 0, 5), { items: [], total: 0 })
  t.notOk(existsSync(path.join(dir, '.versions')), 'nothing written')
})

t.test('drafts: a publish or a delete that a crash cut short is finished at open', async t => {
  const dataDir = tempDir(t)
  const { log, lines: logged } = recorder()
  const first = await open(t, dataDir)
  const { entry: a } = await first.create(scope, 'posts', input('a', { title: 'A' }))
  await first.create(scope, 'posts', input('b', { title: 'B' }))
  await first.create(scope, 'posts', input('c', { title: 'C' }))
  for (const slug of ['a', 'b', 'c']) await first.putDraft(scope, 'posts', slug, { title: slug + '2' })
  await first.addSchedule({ id: 's-c', scope, collection: 'posts', slug: 'c', action: 'publish', at: new Date(START + 60_000).toISOString() })
  await first.close()
  const dir = bucket(dataDir, 'default', 'posts', '_')
  const mark = (slug: string, publishedAt: string): void => {
    const file = path.join(dir, '.drafts', slug + '.json')
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')) as object, published_at: publishedAt }))
  }
  // a: published, the draft not yet removed; b: marked, but its entry write never landed; c: deleted, draft and schedule left.
  mark('a', a.updatedAt)
  mark('b', new Date(START + 3_600_000).toISOString())
  writeFileSync(path.join(dir, '.drafts', '.c.json.1.tmp'), '{')
  unlinkSync(path.join(dir, 'c.json'))

  const second = await open(t, dataDir, { log })
  t.equal(await second.getDraft(scope, 'posts', 'a'), undefined, 'the published draft is gone')
  t.same((await second.getDraft(scope, 'posts', 'b'))?.data, { title: 'b2' }, 'the one whose publish never landed is pending')
  t.notOk('published_at' in (JSON.parse(readFileSync(path.join(dir, '.drafts', 'b.json'), 'utf8')) as object), 'and unmarked')
  t.equal(await second.getDraft(scope, 'posts', 'c'), undefined, 'a deleted entry\'s draft is gone')
  t.equal(await second.getSchedule('s-c'), undefined, 'and its schedule')
  t.same(readdirSync(path.join(dir, '.drafts')), ['b.json'])
  t.match(logged.find(l => l.msg === 'repaired drafts and schedules a crash left behind')?.obj, { drafts: 2, restored: 1, schedules: 1 })
})

t.test('drafts: a publish marks the draft, then removes it with the entry written', async t => {
  const dataDir = tempDir(t)
  const store = await open(t, dataDir)
  await store.create(scope, 'posts', input('a', { title: 'A' }))
  await store.putDraft(scope, 'posts', 'a', { title: 'A2' })
  const [publish, redraft] = await Promise.all([
    store.update(scope, 'posts', input('a', { title: 'A2' }, { clearDraft: true })),
    store.putDraft(scope, 'posts', 'a', { title: 'A3' })
  ])
  t.same(publish.entry.data, { title: 'A2' })
  t.same(await store.getDraft(scope, 'posts', 'a'), redraft, 'a draft saved after the publish was decided survives it')
  t.equal(await store.deleteDraft({ environment: 'other', locale: null }, 'posts', 'a'), false, 'no such bucket')
  await store.delete(scope, 'posts', 'a')
  t.same(readdirSync(path.join(bucket(dataDir, 'default', 'posts', '_'), '.drafts')), [], 'the delete removed the file')
})

t.test('layout: a journal a crash left is run again at the next open', async t => {
  const dataDir = tempDir(t)
  const first = await open(t, dataDir)
  await first.create(scope, 'posts', input('a', { n: 1 }, { keepVersions: 5 }))
  await first.create(scope, 'pages', input('p', { n: 1 }))
  await first.addSchedule({ id: 's1', scope, collection: 'posts', slug: 'a', action: 'publish', at: new Date(START + 60_000).toISOString() })
  await first.close()
  // The journal written and the first bucket moved, then the crash: pages/_ still unmoved.
  const journal = { id: 'j-1', moves: [{ dimension: 'locale', from: '', to: 'en' }], layout: layoutText({ locale: 'en', environment: 'default' }) }
  writeFileSync(bucket(dataDir, 'layout-journal.json'), JSON.stringify(journal))
  renameSync(bucket(dataDir, 'default', 'posts', '_'), bucket(dataDir, 'default', 'posts', 'en'))

  const { log, lines: logged } = recorder()
  // Opened with locales on (the journal's layout): the journal finishes, nothing more moves.
  const second = await open(t, dataDir, { locales: ['en'], log })
  const en: Scope = { environment: 'default', locale: 'en' }
  t.same((await second.get(en, 'pages', 'p'))?.data, { n: 1 }, 'the unmoved bucket moved')
  t.same((await second.get(en, 'posts', 'a'))?.data, { n: 1 })
  t.equal((await second.versions(en, 'posts', 'a', 5, 0, 5)).total, 1, 'with its versions')
  t.same((await second.getSchedule('s1'))?.scope, en, 'schedules relabelled')
  t.notOk(existsSync(bucket(dataDir, 'layout-journal.json')), 'the journal is gone')
  t.equal(readFileSync(bucket(dataDir, 'layout.json'), 'utf8'), journal.layout)
  t.notOk(existsSync(bucket(dataDir, 'default', 'pages', '_')))
  t.ok(logged.some(l => l.msg === 'content moved to the new layout of locales and environments'))
})

t.test('layout: a clash keeps the displaced entry as a version, and moves drafts, versions and schedules', async t => {
  const dataDir = tempDir(t)
  const en: Scope = { environment: 'default', locale: 'en' }
  const first = await open(t, dataDir, { locales: ['en'] })
  await first.create(en, 'posts', input('a', { title: 'moved 1' }, { keepVersions: 5 }))
  const { entry: moved } = await first.update(en, 'posts', input('a', { title: 'moved 2' }, { keepVersions: 5 }))
  await first.putDraft(en, 'posts', 'a', { title: 'moved draft' })
  await first.create(en, 'posts', input('b', { title: 'B' }))
  await first.create(en, 'posts', input('c', { title: 'C' }, { keepVersions: 5 }))
  await first.addSchedule({ id: 's1', scope: en, collection: 'posts', slug: 'a', action: 'unpublish', at: new Date(START + 60_000).toISOString() })
  const seq = await first.changes.latestSeq()
  const fingerprint = await first.contentFingerprint()
  await first.close()
  // What locales off would find under no locale: an entry of the same slug, with versions and a draft of its own.
  const target = bucket(dataDir, 'default', 'posts', '_')
  mkdirSync(path.join(target, '.versions'), { recursive: true })
  mkdirSync(path.join(target, '.drafts'), { recursive: true })
  const displaced = { status: 'published', created_at: '2025-01-01T00:00:00.000Z', updated_at: '2025-02-01T00:00:00.000Z', data: { title: 'target' } }
  writeFileSync(path.join(target, 'a.json'), JSON.stringify(displaced))
  writeFileSync(path.join(target, '.versions', 'a.jsonl'), [1, 2, 3].map(n => JSON.stringify({ version: n, status: 'published', created_at: displaced.updated_at, entry_created_at: displaced.created_at, floor: 1, data: { n } }) + '\n').join(''))
  writeFileSync(path.join(target, '.drafts', 'a.json'), JSON.stringify({ created_at: displaced.updated_at, updated_at: displaced.updated_at, data: { title: 'target draft' } }))

  const second = await open(t, dataDir)
  t.same(await second.get(scope, 'posts', 'a'), moved, 'the moved entry wins')
  t.ok(await second.get(scope, 'posts', 'b'))
  t.same((await second.versions(scope, 'posts', 'c', 5, 0, 5)).items.map(v => v.version), [1], 'versions without a clash keep their numbers')
  const versions = await second.versions(scope, 'posts', 'a', 50, 0, 50)
  t.same(versions.items.map(v => v.version), [6, 5, 4, 3, 2], 'the target\'s live versions, the displaced entry, then the moved ones renumbered')
  t.same((await second.version(scope, 'posts', 'a', 4, 50))?.data, { title: 'target' }, 'the displaced entry is version 4')
  t.same((await second.version(scope, 'posts', 'a', 6, 50))?.data, { title: 'moved 2' })
  t.same((await second.version(scope, 'posts', 'a', 2, 50))?.data, { n: 2 }, 'the moved entry file names no version of the old numbering')
  t.notOk('version' in (JSON.parse(readFileSync(path.join(target, 'a.json'), 'utf8')) as object))
  t.same((await second.getDraft(scope, 'posts', 'a'))?.data, { title: 'moved draft' }, 'the moved draft replaced the target\'s')
  t.same((await second.getSchedule('s1'))?.scope, scope)
  t.not(await second.contentFingerprint(), fingerprint, 'the fingerprint changed')
  const records = (await second.changes.since(seq, 100, { environment: 'default', locale: 'en' })).records
  t.same(records.map(r => [r.slug, r.op]).sort(), [['a', 'delete'], ['b', 'delete'], ['c', 'delete']], 'tombstones at the old keys')
  const now = (await second.changes.since(seq, 100, { environment: 'default', locale: null })).records
  t.same(now.map(r => [r.slug, r.op]).sort(), [['a', 'upsert'], ['b', 'upsert'], ['c', 'upsert']], 'upserts at the new ones')
  t.equal(now.find(r => r.slug === 'a')?.at, moved.updatedAt)
  t.notOk(existsSync(bucket(dataDir, 'default', 'posts', 'en')), 'the moved folder is gone')
  await second.update(scope, 'posts', input('a', { title: 'after' }, { keepVersions: 50 }))
  t.equal((await second.versions(scope, 'posts', 'a', 50, 0, 50)).items[0]?.version, 7, 'numbering goes on after the merge')
})

t.test('layout: environments on and off move every locale\'s buckets', async t => {
  const dataDir = tempDir(t)
  const first = await open(t, dataDir, { locales: ['en', 'de'] })
  await first.create({ environment: 'default', locale: 'en' }, 'posts', input('a', { n: 1 }))
  await first.create({ environment: 'default', locale: 'de' }, 'posts', input('a', { n: 2 }))
  await first.addSchedule({ id: 's1', scope: { environment: 'default', locale: 'de' }, collection: 'posts', slug: 'a', action: 'publish', at: new Date(START + 60_000).toISOString() })
  await first.close()
  const second = await open(t, dataDir, { locales: ['en', 'de'], environments: ['prod', 'staging'] })
  t.same((await second.get({ environment: 'prod', locale: 'de' }, 'posts', 'a'))?.data, { n: 2 })
  t.same((await second.get({ environment: 'prod', locale: 'en' }, 'posts', 'a'))?.data, { n: 1 })
  t.equal(await second.get({ environment: 'default', locale: 'en' }, 'posts', 'a'), undefined)
  t.same((await second.getSchedule('s1'))?.scope, { environment: 'prod', locale: 'de' })
  await second.create({ environment: 'prod', locale: 'en' }, 'posts', input('b', { n: 3 }))
  await second.close()
  const third = await open(t, dataDir, { locales: ['en', 'de'] })
  t.same((await third.get({ environment: 'default', locale: 'en' }, 'posts', 'b'))?.data, { n: 3 }, 'and back')
  t.notOk(existsSync(bucket(dataDir, 'prod')), 'the emptied environment folder is gone')
})
