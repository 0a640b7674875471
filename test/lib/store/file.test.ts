// What only the file store has: its files on disk, what it does with files it cannot use, and
// its folders. The rules every store follows are test/lib/store/contract.test.ts's.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createStore, type StoreLogger } from '../../../lib/store/index.js'
import type { Scope } from '../../../types/scope.js'
import type { EntryInput } from '../../../types/store.js'
import { tempDir } from '../../helper.js'
import { allEntries } from '../../fixtures/stores.js'

const scope: Scope = { environment: 'default', locale: null }
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

interface Logged { level: string, obj: object, msg: string }

function recorder (): { log: StoreLogger, lines: Logged[] } {
  const lines: Logged[] = []
  const at = (level: string) => (obj: object, msg: string) => { lines.push({ level, obj, msg }) }
  return { log: { info: at('info'), warn: at('warn'), error: at('error') }, lines }
}

const input = (slug: string, data: Record<string, unknown> = {}): EntryInput => ({ slug, status: 'published', data })

t.test('file store: crash leftovers and unreadable files at open', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const dir = path.join(dataDir, 'content', 'default', 'posts', '_')
  mkdirSync(dir, { recursive: true })
  const file = (name: string, body: string): void => { writeFileSync(path.join(dir, name), body) }
  file('good.json', JSON.stringify({ status: 'draft', created_at: '2024-01-01T00:00:00+02:00', updated_at: '2024-01-02T00:00:00Z', data: { title: 'Good' } }))
  file('.good.json.123.1.tmp', '{"status": "published", "data": {"tit')
  file('torn.json', '{"status": "published", "data": {"tit')
  file('array.json', '[]')
  file('bad-data.json', JSON.stringify({ status: 'published', data: [1] }))
  file('bad-status.json', JSON.stringify({ status: 'archived', data: {} }))
  file('bad-date.json', JSON.stringify({ status: 'published', created_at: 'yesterday', updated_at: 'today', data: {} }))
  file('hand-written.json', JSON.stringify({ data: { title: 'No envelope fields' } }))
  file('Not A Slug.json', '{}')
  file('notes.txt', 'hello')
  mkdirSync(path.join(dataDir, 'content', 'default', 'Bad Collection', '_'), { recursive: true })
  const { log, lines } = recorder()
  const store = createStore('file', { dataDir, log })
  await store.open()
  t.teardown(() => store.close())

  const good = await store.get({ environment: 'default', locale: null }, 'posts', 'good')
  t.same(good, { slug: 'good', status: 'draft', data: { title: 'Good' }, createdAt: '2023-12-31T22:00:00.000Z', updatedAt: '2024-01-02T00:00:00.000Z' }, 'timestamps normalized to UTC')
  const hand = await store.get({ environment: 'default', locale: null }, 'posts', 'hand-written')
  t.equal(hand?.status, 'published', 'a hand-written file defaults to published')
  t.match(hand?.createdAt, ISO, 'and takes the file time')
  t.same((await allEntries(store)).map(e => e.entry.slug).sort(), ['good', 'hand-written'])
  t.notOk(readdirSync(dir).some(name => name.endsWith('.tmp')), 'temp files are removed')
  const skipped = lines.filter(l => l.msg === 'content file skipped').map(l => (l.obj as { file: string }).file).sort()
  t.same(skipped, [
    'default/Bad Collection', 'default/posts/_/Not A Slug.json', 'default/posts/_/array.json', 'default/posts/_/bad-data.json',
    'default/posts/_/bad-date.json', 'default/posts/_/bad-status.json', 'default/posts/_/notes.txt', 'default/posts/_/torn.json'
  ], 'each unusable file is logged by its path under content/')
  t.ok(lines.some(l => l.level === 'warn' && /temporary files/.test(l.msg)))
})

t.test('file store: file layout', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const store = createStore('file', { dataDir })
  await store.open()
  t.teardown(() => store.close())
  const entry = await store.create({ environment: 'default', locale: null }, 'posts', input('hello', { title: 'Hi', _slug: 'not-special' }))
  await store.create({ environment: 'default', locale: 'fr' }, 'posts', input('bonjour', { title: 'Salut' }))
  const text = readFileSync(path.join(dataDir, 'content', 'default', 'posts', '_', 'hello.json'), 'utf8')
  t.equal(text, JSON.stringify({ status: 'published', created_at: entry.createdAt, updated_at: entry.updatedAt, data: { title: 'Hi', _slug: 'not-special' } }, null, 2) + '\n', 'pretty-printed; the slug is the file name')
  t.ok(existsSync(path.join(dataDir, 'content', 'default', 'posts', 'fr', 'bonjour.json')))
  t.same(readdirSync(path.join(dataDir, 'content', 'default', 'posts', '_')), ['hello.json'], 'no temp file is left behind')
})

t.test('file store: a failed write leaves the index as the disk is', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const store = createStore('file', { dataDir })
  await store.open()
  t.teardown(() => store.close())
  await store.create(scope, 'posts', input('a', { n: 1 }))
  const { rmSync } = await import('node:fs')
  rmSync(path.join(dataDir, 'content', 'default', 'posts'), { recursive: true, force: true })
  await t.rejects(store.create(scope, 'posts', input('b', { n: 2 })), { code: 'ENOENT' })
  t.equal(await store.get(scope, 'posts', 'b'), undefined, 'the failed create is not visible')
  await store.create(scope, 'posts', { ...input('b', { n: 2 }), unique: ['n'] })
  t.pass('nor does it hold its slug or its unique value')
  t.ok(existsSync(path.join(dataDir, 'content', 'default', 'posts', '_', 'b.json')), 'the folder is made again')
})

t.test('file store: ensureCollection makes every environment and locale folder', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const store = createStore('file', { dataDir, locales: ['en', 'de'], environments: ['main', 'staging'] })
  await store.open()
  t.teardown(() => store.close())
  await store.ensureCollection('articles')
  for (const env of ['main', 'staging']) {
    for (const locale of ['en', 'de']) t.ok(existsSync(path.join(dataDir, 'content', env, 'articles', locale)), `${env}/${locale}`)
  }
})
