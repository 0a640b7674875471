// What a crash leaves among the assets, repaired at the next start (issue 28 items 7 and 12), on
// both stores: temp files of uploads cut short are removed; a record whose file is gone (a kill
// inside a delete, which removes the file first) is dropped, so the delete has happened; a file
// no record lists (a kill inside an upload, after the rename) is registered.
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { build, eachStore, tempDir } from '../helper.js'
import { png, upload } from '../lib/assets/fixtures.js'

/** Every file under `dir`, hidden ones too, relative. */
function filesUnder (dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }))
    .filter(e => e.isFile())
    .map(e => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort()
}

eachStore(t, async (t, store, env) => {
  t.test('a restart removes crash leftovers and reconciles records with files', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    const assets = path.join(dataDir, 'assets')
    const first = await build(t, env, { dataDir, keepOpen: true })
    t.equal((await upload(first, [{ name: 'kept.txt', data: Buffer.from('kept') }])).statusCode, 201)
    t.equal((await upload(first, [{ name: 'gone.txt', data: Buffer.from('gone') }], { fields: { folder: 'docs' } })).statusCode, 201)
    await first.close()

    // What kills leave: temp files of uploads cut short (root and folder), a delete cut after
    // its unlink, and an upload cut after its rename (a file with no record, a PNG in a new folder).
    const temps = [path.join(assets, '.upload.0f8fad5b-d9cb-469f-a165-70867728950e.tmp'), path.join(assets, 'docs', '.upload.7c9e6679-7425-40de-944b-e07fc1f90ae7.tmp')]
    // Left long ago: with postgres the assets directory is shared, and a recent temp file may be
    // another replica's upload in progress, which a start leaves alone.
    const longAgo = new Date(Date.now() - 3600_000)
    for (const temp of temps) {
      writeFileSync(temp, 'half an upload')
      utimesSync(temp, longAgo, longAgo)
    }
    const inProgress = path.join(assets, '.upload.3f2504e0-4f89-41d3-9a0c-0305e82c3301.tmp')
    writeFileSync(inProgress, 'being written')
    rmSync(path.join(assets, 'docs', 'gone.txt'))
    mkdirSync(path.join(assets, 'img'))
    writeFileSync(path.join(assets, 'img', 'orphan.png'), await png(12, 8))
    writeFileSync(path.join(assets, '.keep'), '')

    const app = await build(t, env, { dataDir })
    const recent = store === 'postgres' ? ['.upload.3f2504e0-4f89-41d3-9a0c-0305e82c3301.tmp'] : []
    t.strictSame(filesUnder(assets), ['.keep', ...recent, 'img/orphan.png', 'kept.txt'], `${store}: the temp files are gone (${store === 'postgres' ? 'but a recent one' : 'all'}), other files stay`)
    const list = (await app.inject({ url: '/api/assets' })).json<{ items: Array<{ path: string, mime: string, width: number | null, height: number | null, size: number }>, total: number }>()
    t.equal(list.total, 2)
    t.strictSame(list.items.map(i => i.path).sort(), ['/api/assets/img/orphan.png', '/api/assets/kept.txt'], 'the dangling record is dropped, the orphan registered')
    t.match(list.items.find(i => i.path === '/api/assets/img/orphan.png'), { mime: 'image/png', width: 12, height: 8 })
    t.equal((await app.inject({ url: '/api/assets/docs/gone.txt' })).statusCode, 404)
    t.equal((await app.inject({ method: 'DELETE', url: '/api/assets/docs/gone.txt' })).statusCode, 404, 'the delete has happened')
    t.equal((await app.inject({ url: '/api/assets/img/orphan.png' })).statusCode, 200)
    t.equal((await app.inject({ method: 'DELETE', url: '/api/assets/img/orphan.png' })).statusCode, 204, 'the registered file is an asset like any other')
    t.notOk(existsSync(path.join(assets, 'img', 'orphan.png')))
  })

  t.test('a clean restart changes nothing', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    const first = await build(t, env, { dataDir, keepOpen: true })
    t.equal((await upload(first, [{ name: 'a.txt', data: Buffer.from('a') }, { name: 'b.txt', data: Buffer.from('b') }])).statusCode, 201)
    const before = (await first.inject({ url: '/api/assets' })).json<unknown>()
    await first.close()
    const app = await build(t, env, { dataDir })
    t.strictSame((await app.inject({ url: '/api/assets' })).json<unknown>(), before)
  })
})
