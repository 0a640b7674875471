// The README's worked example, examples/sync.mjs, run as a build would run it: against a real
// server process, first an initial sync into a folder, then incremental syncs with edits,
// unpublishes and deletes in between; after each run the folder must hold exactly the server's
// content (every visible entry's GET body, nothing else).
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { ADMIN_KEY, ROOT, freePort, startServer, tempDir, waitForHealth } from '../helper.js'
import { writeSchemas } from '../fixtures/content-schemas.js'

const COLLECTIONS = ['authors', 'posts']

async function runScript (t: Test, folder: string, env: Record<string, string>): Promise<string> {
  let out = ''
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'examples', 'sync.mjs'), folder], { env: { PATH: process.env.PATH ?? '', ...env } })
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    child.stderr.on('data', (d: Buffer) => { out += d.toString() })
    child.once('error', reject)
    child.once('exit', resolve)
  })
  t.equal(code, 0, 'the script succeeds', { output: out })
  return out
}

/** The folder as `<collection>/<slug>` → parsed entry. */
function folderState (folder: string): Map<string, unknown> {
  const state = new Map<string, unknown>()
  for (const collection of readdirSync(folder)) {
    if (collection === '.cursor') continue
    for (const file of readdirSync(path.join(folder, collection))) {
      state.set(`${collection}/${file.replace(/\.json$/, '')}`, JSON.parse(readFileSync(path.join(folder, collection, file), 'utf8')))
    }
  }
  return state
}

async function serverState (base: string, headers: Record<string, string>, status: string): Promise<Map<string, unknown>> {
  const state = new Map<string, unknown>()
  for (const collection of COLLECTIONS) {
    const list = await (await fetch(`${base}/api/content/${collection}?_per_page=1000&_status=${status}`, { headers })).json() as { items: Array<{ _slug: string }> }
    for (const item of list.items) {
      state.set(`${collection}/${item._slug}`, await (await fetch(`${base}/api/content/${collection}/${item._slug}`, { headers })).json())
    }
  }
  return state
}

t.test('examples/sync.mjs keeps a folder exactly in step with the server', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  writeSchemas(dataDir)
  const port = await freePort()
  const server = startServer({ CMS_DATA_DIR: dataDir, CMS_PORT: String(port), CMS_SEED: 'false', CMS_API_KEY: ADMIN_KEY, CMS_LOG_LEVEL: 'warn' })
  // The server is stopped, and its exit awaited, before its data folder is removed: a server
  // still writing as the folder goes makes the removal fail (ENOTEMPTY).
  const stop = async (): Promise<void> => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM')
    await server.exited
  }
  t.teardown(stop)
  await waitForHealth(t, port, server.exited)
  const base = `http://127.0.0.1:${port}`
  const admin = { authorization: `Bearer ${ADMIN_KEY}` }
  const send = async (method: string, url: string, body?: unknown): Promise<void> => {
    const init = body === undefined ? { method, headers: admin } : { method, headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify(body) }
    const res = await fetch(`${base}${url}`, init)
    t.ok(res.status < 300, `${method} ${url}`, { status: res.status })
  }
  await send('POST', '/api/content/authors', { _slug: 'ann', name: 'Ann' })
  for (let i = 1; i <= 12; i++) await send('POST', '/api/content/posts', { _slug: `p${i}`, title: `Post ${i}`, _status: i % 4 === 0 ? 'draft' : 'published' })

  const published = path.join(tempDir(t), 'site')
  const withDrafts = path.join(tempDir(t), 'preview')
  const check = async (what: string): Promise<void> => {
    t.match(await runScript(t, published, { LECTERN_URL: base }), /synced: \d+ written, \d+ removed/)
    await runScript(t, withDrafts, { LECTERN_URL: base, LECTERN_KEY: ADMIN_KEY })
    t.same(folderState(published), await serverState(base, {}, 'published'), `published site: ${what}`)
    t.same(folderState(withDrafts), await serverState(base, { authorization: `Bearer ${ADMIN_KEY}` }, 'all'), `preview: ${what}`)
  }
  await check('the initial sync')
  t.equal(folderState(published).size, 1 + 9)
  await check('a run with no changes')

  await send('PATCH', '/api/content/posts/p1', { title: 'Edited' })
  await send('PATCH', '/api/content/posts/p2', { _status: 'draft' })
  await send('PATCH', '/api/content/posts/p4', { _status: 'published' })
  await send('DELETE', '/api/content/posts/p3')
  await send('DELETE', '/api/content/posts/p8')
  await send('POST', '/api/content/posts', { _slug: 'new', title: 'New' })
  await check('edits, an unpublish, a publish, deletes and a create')
  t.notOk(existsSync(path.join(published, 'posts', 'p2.json')), 'the unpublished entry left the published site')
  t.ok(existsSync(path.join(withDrafts, 'posts', 'p2.json')), 'and stays in the preview')

  await send('DELETE', '/api/content/authors/ann')
  await send('PUT', '/api/content/posts/p5', { title: 'Replaced' })
  await check('another round')
  await stop()
})
