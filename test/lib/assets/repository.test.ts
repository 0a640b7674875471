import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import Database from '../../../lib/sqlite-driver.js'
import t, { type Test } from 'tap'
import { createAssetRepository, type AssetRepository } from '../../../lib/assets/repository.js'
import { ASSET_INDEX_FILE } from '../../../lib/assets/file-repository.js'
import { SQLITE_FILE } from '../../../lib/assets/sqlite-repository.js'
import type { AssetMeta } from '../../../lib/assets/types.js'
import { STORES, tempDir, type StoreName } from '../../helper.js'
import { assetRepository as repository } from './fixtures.js'

function meta (p: string, createdAt: string, extra: Partial<AssetMeta> = {}): AssetMeta {
  const at = p.lastIndexOf('/')
  return {
    environment: 'default',
    path: p,
    folder: at < 0 ? '' : p.slice(0, at),
    name: at < 0 ? p : p.slice(at + 1),
    size: 100,
    mime: p.endsWith('.png') ? 'image/png' : 'text/plain',
    width: p.endsWith('.png') ? 10 : null,
    height: p.endsWith('.png') ? 10 : null,
    createdAt,
    ...extra
  }
}

async function opened (t: Test, kind: StoreName, dataDir: string, scanned: AssetMeta[] = []): Promise<{ repo: AssetRepository, rebuilt: string | null, scans: number }> {
  const repo = await repository(t, kind, dataDir)
  let scans = 0
  const { rebuilt } = await repo.open(async () => { scans++; return scanned })
  t.teardown(async () => { await repo.close() })
  return { repo, rebuilt, scans }
}

for (const kind of STORES) {
  t.test(`${kind}: insert, get, remove, list order, filters and paging`, async t => {
    const { repo, rebuilt } = await opened(t, kind, tempDir(t))
    t.equal(rebuilt, 'missing', 'a new data dir has no metadata yet')
    const same = '2026-01-01T00:00:00.000Z'
    await repo.insert(meta('a/one.png', '2026-01-01T00:00:01.000Z'))
    await repo.insert(meta('a/two.txt', same))
    await repo.insert(meta('b/three.png', same))
    await repo.insert(meta('Four.png', '2026-01-02T00:00:00.000Z'))
    await repo.insert(meta('a/one.png', '2026-01-01T00:00:01.000Z', { environment: 'other' }))

    t.same((await repo.get('default', 'a/one.png')), meta('a/one.png', '2026-01-01T00:00:01.000Z'))
    t.equal((await repo.get('default', 'nope.png')), undefined)
    t.equal((await repo.get('elsewhere', 'a/one.png')), undefined)

    const names = async (q: Partial<Parameters<AssetRepository['list']>[1]>): Promise<string[]> =>
      (await repo.list('default', { page: 1, perPage: 20, ...q })).items.map(m => m.path)
    t.same(await names({}), ['Four.png', 'a/one.png', 'b/three.png', 'a/two.txt'], 'newest first; equal times: the later insert first')
    t.same(await names({ folder: 'a' }), ['a/one.png', 'a/two.txt'])
    t.same(await names({ folder: '' }), ['Four.png'])
    t.same(await names({ mime: 'image/' }), ['Four.png', 'a/one.png', 'b/three.png'])
    t.same(await names({ mime: 'text/plain' }), ['a/two.txt'])
    t.same(await names({ q: 'O' }), ['Four.png', 'a/one.png', 'a/two.txt'], 'q is case-insensitive on the name only')
    t.same(await names({ q: 'four' }), ['Four.png'])
    t.same(await names({ q: '%' }), [], 'no wildcard meaning')
    t.same(await names({ q: '_' }), [])
    const page = await repo.list('default', { page: 2, perPage: 3 })
    t.same(page.items.map(m => m.path), ['a/two.txt'])
    t.equal(page.total, 4)
    t.equal((await repo.list('other', { page: 1, perPage: 20 })).total, 1, 'environments are separate')

    t.equal(await repo.remove('default', 'a/two.txt'), true)
    t.equal(await repo.remove('default', 'a/two.txt'), false)
    t.equal((await repo.list('default', { page: 1, perPage: 20 })).total, 3)
  })

  t.test(`${kind}: keyset pages follow the list order from a position, equal times included`, async t => {
    const { repo } = await opened(t, kind, tempDir(t))
    const same = '2026-01-01T00:00:00.000Z'
    // Three share a time: the later insert comes first among them.
    for (const [p, at] of [['a/1.png', same], ['a/2.txt', same], ['b/3.png', same], ['4.png', '2026-01-02T00:00:00.000Z'], ['a/0.png', '2025-12-31T00:00:00.000Z']] as const) {
      await repo.insert(meta(p, at))
    }
    const walk = async (q: Partial<Parameters<AssetRepository['list']>[1]>, perPage: number): Promise<string[]> => {
      const out: string[] = []
      let page = await repo.list('default', { page: 1, perPage, ...q })
      for (;;) {
        out.push(...page.items.map(m => m.path))
        if (page.next === null) return out
        t.equal(page.items.length, perPage, 'only a full page has a next')
        page = await repo.list('default', { page: 1, perPage, ...q, after: page.next })
      }
    }
    const whole = await repo.list('default', { page: 1, perPage: 20 })
    t.same(whole.items.map(m => m.path), ['4.png', 'b/3.png', 'a/2.txt', 'a/1.png', 'a/0.png'])
    t.equal(whole.next, null, 'nothing after the last page')
    for (const perPage of [1, 2, 3]) {
      t.same(await walk({}, perPage), whole.items.map(m => m.path), `pages of ${perPage}`)
      t.same(await walk({ folder: 'a' }, perPage), ['a/2.txt', 'a/1.png', 'a/0.png'], `pages of ${perPage} in a folder`)
      t.same(await walk({ mime: 'image/' }, perPage), ['4.png', 'b/3.png', 'a/1.png', 'a/0.png'], `pages of ${perPage} of images`)
    }
    const first = await repo.list('default', { page: 1, perPage: 2 })
    t.same(first.next, { createdAt: same, ordinal: first.next?.ordinal }, 'the next position is the last item\'s')
    // A newer asset and the removal of one already seen do not move the pages after the position.
    await repo.insert(meta('5.png', '2026-01-03T00:00:00.000Z'))
    await repo.remove('default', '4.png')
    const after = await repo.list('default', { page: 1, perPage: 2, after: first.next ?? undefined })
    t.same(after.items.map(m => m.path), ['a/2.txt', 'a/1.png'])
    t.equal(after.total, 5, 'the total counts every match')
    t.equal((await repo.list('other', { page: 1, perPage: 2, after: first.next ?? undefined })).items.length, 0, 'environments are separate')
  })

  t.test(`${kind}: survives a reopen without a rescan`, async t => {
    const dataDir = tempDir(t)
    const first = await repository(t, kind, dataDir)
    await first.open(async () => [])
    // Concurrent writes all land (the file backend coalesces them).
    await Promise.all(Array.from({ length: 25 }, async (_, i) => { await first.insert(meta(`f/${i}.png`, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString())) }))
    await first.remove('default', 'f/3.png')
    await first.close()
    const { repo, rebuilt, scans } = await opened(t, kind, dataDir)
    t.equal(rebuilt, null)
    t.equal(scans, 0, 'no scan of the disk')
    const list = await repo.list('default', { page: 1, perPage: 100 })
    t.equal(list.total, 24)
    t.equal(list.items[0]?.path, 'f/24.png')
    t.equal((await repo.get('default', 'f/3.png')), undefined)
  })

  t.test(`${kind}: rebuilt from the scan when the metadata is missing`, async t => {
    const dataDir = tempDir(t)
    const scanned = [meta('z.png', '2026-03-01T00:00:00.000Z'), meta('y.txt', '2026-02-01T00:00:00.000Z')]
    const { repo, rebuilt, scans } = await opened(t, kind, dataDir, scanned)
    t.equal(rebuilt, 'missing')
    t.equal(scans, 1)
    t.same((await repo.list('default', { page: 1, perPage: 10 })).items.map(m => m.path), ['z.png', 'y.txt'])
    if (kind === 'postgres') {
      t.notOk(existsSync(path.join(dataDir, SQLITE_FILE)), 'no SQLite file in the data dir: the records are in the database')
      const other = await opened(t, kind, dataDir)
      t.same([other.rebuilt, other.scans], [null, 0], 'another process on the database finds them')
      t.equal((await other.repo.list('default', { page: 1, perPage: 10 })).total, 2)
      return
    }
    const file = path.join(dataDir, kind === 'sqlite' ? SQLITE_FILE : ASSET_INDEX_FILE)
    t.ok(existsSync(file), 'the metadata is written at once')
  })

  t.test(`${kind}: a failed rebuild leaves no metadata behind, so the next start tries again`, async t => {
    const dataDir = tempDir(t)
    const repo = await repository(t, kind, dataDir)
    await t.rejects(repo.open(async () => { throw new Error('disk on fire') }), /disk on fire/)
    const again = await opened(t, kind, dataDir, [meta('a.png', '2026-01-01T00:00:00.000Z')])
    t.equal(again.rebuilt, 'missing')
    t.equal((await again.repo.list('default', { page: 1, perPage: 10 })).total, 1)
  })
}

t.test('file: an unreadable index is rebuilt; writes are atomic', async t => {
  const dataDir = tempDir(t)
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(path.join(dataDir, ASSET_INDEX_FILE), '{"version": 1, "assets": [')
  const { repo, rebuilt } = await opened(t, 'file', dataDir, [meta('a.png', '2026-01-01T00:00:00.000Z')])
  t.equal(rebuilt, 'unreadable')
  await repo.insert(meta('b.png', '2026-01-02T00:00:00.000Z'))
  const stored = JSON.parse(readFileSync(path.join(dataDir, ASSET_INDEX_FILE), 'utf8')) as { assets: Array<{ path: string }> }
  t.same(stored.assets.map(a => a.path), ['a.png', 'b.png'])
  t.same(readdirSync(dataDir).filter(n => n.endsWith('.tmp')), [], 'no temp file is left beside the index')
})

t.test('sqlite: a database without the table is rebuilt', async t => {
  const dataDir = tempDir(t)
  const first = createAssetRepository('sqlite', { dataDir })
  await first.open(async () => [])
  await first.close()
  const db = new Database(path.join(dataDir, SQLITE_FILE))
  db.exec('DROP TABLE assets')
  db.close()
  const { rebuilt, repo } = await opened(t, 'sqlite', dataDir, [meta('a.png', '2026-01-01T00:00:00.000Z')])
  t.equal(rebuilt, 'missing')
  t.equal((await repo.list('default', { page: 1, perPage: 10 })).total, 1)
})

if (STORES.includes('postgres')) {
  t.test('postgres: replicas opening together rebuild once; racing writes of one path leave one record', async t => {
    const dataDir = tempDir(t)
    const scanned = [meta('a.png', '2026-01-01T00:00:00.000Z'), meta('b.png', '2026-01-02T00:00:00.000Z')]
    const [one, two] = await Promise.all([opened(t, 'postgres', dataDir, scanned), opened(t, 'postgres', dataDir, scanned)])
    t.same([one?.scans, two?.scans].sort(), [0, 1], 'one replica scans the disk, the other waits and finds the table')
    t.same([one?.rebuilt, two?.rebuilt].sort(), ['missing', null])
    const a = one?.repo as AssetRepository
    const b = two?.repo as AssetRepository
    await Promise.all([a.insert(meta('c.png', '2026-01-03T00:00:00.000Z', { size: 1 })), b.insert(meta('c.png', '2026-01-03T00:00:00.000Z', { size: 2 }))])
    const list = await b.list('default', { page: 1, perPage: 10 })
    t.same(list.items.map(m => m.path), ['c.png', 'b.png', 'a.png'])
    t.ok([1, 2].includes((await a.get('default', 'c.png'))?.size ?? 0), 'one of the two writes holds')
    t.equal(await a.remove('default', 'c.png'), true)
    t.equal(await b.get('default', 'c.png'), undefined, 'a remove on one is seen by the other')
  })

  t.test('postgres: a closed repository refuses calls; the factory needs the database', async t => {
    const { repo } = await opened(t, 'postgres', tempDir(t))
    await repo.close()
    await t.rejects(repo.get('default', 'a.png'), /not open/)
    t.throws(() => createAssetRepository('postgres', { dataDir: tempDir(t) }), /needs the store's database/)
  })
}
