// The saved reference index against the content it was saved for (issue 28 item 8): entry files
// written or removed by hand while the server was stopped (file store), and a saved index older
// than the content (either store), make the next start rebuild it; unchanged content loads it.
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { REFERENCE_INDEX_FILE } from '../../lib/references/index-file.js'
import { eachStore, tempDir, type Env } from '../helper.js'
import { seed, setup, type Client } from '../lib/references/app-fixture.js'

const referrersOf = async (c: Client, collection: string, slug: string): Promise<string[]> =>
  (await c.app.references.referrers(collection, slug)).map(r => `${r.collection}/${r.slug}.${r.field}`)

async function restart (t: Test, env: Env, dataDir: string): Promise<Client> {
  return await setup(t, env, { dataDir, keepOpen: true })
}

/** Seeds the entries, with a second post `d2` naming jane, and closes. */
async function seeded (t: Test, env: Env): Promise<string> {
  const dataDir = path.join(tempDir(t), 'data')
  const c = await restart(t, env, dataDir)
  await seed(t, c)
  await c.create(t, 'posts', { _slug: 'd2', title: 'Second', author: 'jane' })
  t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/d2.author', 'posts/hello.author'])
  await c.app.close()
  return dataDir
}

/** A record only the saved file knows: shown after a restart only when the file was trusted. */
function addPhantom (dataDir: string): void {
  const file = path.join(dataDir, REFERENCE_INDEX_FILE)
  const saved = JSON.parse(readFileSync(file, 'utf8'))
  saved.referrers.push(['posts', 'phantom', null, [['author', 'authors', 'jane']]])
  writeFileSync(file, JSON.stringify(saved))
}

eachStore(t, async (t, store, env) => {
  // With PostgreSQL no file is kept: every start builds the index from the database (test/plugins/references.test.ts).
  const noFile = store === 'postgres' && 'no index file is kept with postgres'
  t.test('unchanged content: the saved index is loaded', { skip: noFile }, async t => {
    const dataDir = await seeded(t, env)
    addPhantom(dataDir)
    const c = await restart(t, env, dataDir)
    t.ok((await referrersOf(c, 'authors', 'jane')).includes('posts/phantom.author'), 'loaded from the file')
    await c.app.close()
  })

  t.test('a saved index older than the content is rebuilt', { skip: noFile }, async t => {
    const dataDir = await seeded(t, env)
    const file = path.join(dataDir, REFERENCE_INDEX_FILE)
    copyFileSync(file, `${file}.old`)
    let c = await restart(t, env, dataDir)
    await c.create(t, 'posts', { _slug: 'third', title: 'Third', author: 'jane' })
    await c.app.close()
    // The older index comes back (a restored backup, a copy of another run's).
    copyFileSync(`${file}.old`, file)
    addPhantom(dataDir)
    c = await restart(t, env, dataDir)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/d2.author', 'posts/hello.author', 'posts/third.author'])
    await c.app.close()
  })

  if (store !== 'file') return
  t.test('file store: hand.json added, d2.json removed and hello.json rewritten while stopped', async t => {
    const dataDir = await seeded(t, env)
    addPhantom(dataDir)
    const dir = path.join(dataDir, 'content', 'default', 'posts', '_')
    writeFileSync(path.join(dir, 'hand.json'), JSON.stringify({ data: { title: 'By hand', author: 'jane' } }))
    rmSync(path.join(dir, 'd2.json'))
    const hello = JSON.parse(readFileSync(path.join(dir, 'hello.json'), 'utf8'))
    hello.data.seo.by = 'jane'
    writeFileSync(path.join(dir, 'hello.json'), JSON.stringify(hello))
    const c = await restart(t, env, dataDir)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/hand.author', 'posts/hello.author', 'posts/hello.seo.by'])
    t.same(await referrersOf(c, 'authors', 'joe'), [], 'the rewritten file no longer names joe')
    t.same((await c.get('/api/content/authors/jane/referrers')).json().map((r: { slug: string }) => r.slug), ['joe', 'hand', 'hello', 'hello'])
    await c.app.close()
  })
})
