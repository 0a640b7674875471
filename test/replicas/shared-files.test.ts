// Writes to what replicas share besides the database (contract §12, issue 23 items 2 and 4): the
// assets directory (records in the database, files on the shared volume) and the types directory.
// Two real server processes on one database, each with its own data dir (its own transform cache):
// - an upload on one is served by the other at once; a delete on one is seen by the other within
//   1 s, its transform variants gone from the other's cache too; a replaced file's variants follow;
// - schema creates of one name racing on both give exactly one 201 (the advisory lock), and the
//   winner's schema is on both within 1 s.
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import t, { type Test } from 'tap'
import { postgresUrl } from '../fixtures/postgres.js'
import { png } from '../lib/assets/fixtures.js'
import { START_MS, request, startCluster, type Replica } from './cluster.js'

t.setTimeout(90_000 + 2 * START_MS)

const FRESH_MS = 1000

/** How long `check` took to hold on `base` after `since` (polled; Infinity when it never did within 3 s). */
async function within (base: string, since: number, check: (base: string) => Promise<boolean>): Promise<number> {
  while (performance.now() - since < FRESH_MS * 3) {
    if (await check(base)) return performance.now() - since
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  return Infinity
}

async function upload (base: string, name: string, data: Buffer): Promise<{ status: number, path: string | undefined, at: number }> {
  const form = new FormData()
  form.append('file', new Blob([new Uint8Array(data)], { type: 'image/png' }), name)
  const res = await fetch(`${base}/api/assets`, { method: 'POST', body: form })
  const body = await res.json() as { items?: Array<{ path: string }> }
  return { status: res.status, path: body.items?.[0]?.path, at: performance.now() }
}

/** The width of a transform's answer, or its status when it is not 200. */
async function variantWidth (base: string, assetPath: string): Promise<number | string> {
  const res = await fetch(`${base}${assetPath.replace('/api/assets/', '/api/transform/')}?w=20&format=png`)
  if (res.status !== 200) return `status ${res.status}`
  return (await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width ?? 'no width'
}

/** The variant files in a replica's own transform cache. */
function variantsOf (replica: Replica): string[] {
  const dir = path.join(replica.env.CMS_DATA_DIR as string, 'cache', 'transforms', 'default')
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter(e => e.isFile()).map(e => e.name)
}

t.test('two replicas sharing the types and assets directories', async t => {
  const cluster = await startCluster(t, await postgresUrl(t), 2)
  const [a, b] = cluster.replicas as [Replica, Replica]

  await t.test('asset writes on one replica reach the other', async t => { await assetWrites(t, a, b) })

  await t.test('schema creates of one name racing on both replicas give exactly one 201', async t => {
    for (let round = 0; round < 4; round++) {
      const name = `race_${round}`
      const answers = await Promise.all([a, b, a, b].map(async (r, i) =>
        await request(r.base, 'POST', '/api/schemas', { name, description: `by ${i}`, fields: { title: { field_type: 'string' } } })))
      const statuses = answers.map(x => x.status).sort()
      t.same(statuses, [201, 409, 409, 409], `round ${round}: one 201, the others CONFLICT`)
      const winner = answers.find(x => x.status === 201)?.body?.description
      const slowest = Math.max(...await Promise.all([a, b].map(async r => await within(r.base, performance.now(), async base =>
        (await request(base, 'GET', `/api/collections/${name}`)).body?.description === winner))))
      t.ok(slowest <= FRESH_MS, `round ${round}: the winner's schema on both (slowest ${Math.round(slowest)} ms)`)
    }
  })
})

async function assetWrites (t: Test, a: Replica, b: Replica): Promise<void> {
  const first = await upload(a.base, 'photo.png', await png(40, 30))
  t.equal(first.status, 201)
  const assetPath = first.path as string
  const listed = (await request(b.base, 'GET', '/api/assets')).body?.items as Array<{ path: string }> | undefined
  t.same(listed?.map(i => i.path), [assetPath], 'the other replica lists it at once')
  t.equal((await fetch(b.base + assetPath)).status, 200, 'the other replica serves it at once (shared records and files)')
  t.equal(await variantWidth(b.base, assetPath), 20, 'and transforms it')
  t.ok(variantsOf(b).length > 0, 'a variant in the other replica\'s own cache')

  const deleted = await fetch(a.base + assetPath, { method: 'DELETE' })
  const since = performance.now()
  t.equal(deleted.status, 204)
  const gone = await within(b.base, since, async base => (await fetch(base + assetPath)).status === 404 &&
    await variantWidth(base, assetPath) === 'status 404' && variantsOf(b).length === 0)
  t.ok(gone <= FRESH_MS, `the delete on the other replica within ${FRESH_MS} ms, its variants dropped there (took ${Math.round(gone)} ms)`)

  // The name is free again: a new file at the same path, whose variants are its own.
  t.equal(await variantWidth(b.base, assetPath), 'status 404')
  const again = await upload(a.base, 'photo.png', await png(10, 10))
  t.equal(again.path, assetPath, 'the same path')
  const replaced = await within(b.base, again.at, async base => await variantWidth(base, assetPath) === 10)
  t.ok(replaced <= FRESH_MS, `the replaced file's variant on the other replica within ${FRESH_MS} ms (took ${Math.round(replaced)} ms)`)
}
