// The `lectern` command (contract §16) on every store: export, import, types and validate against
// a data directory (in this process, through main()), and against a running server; exit codes
// 0, 1 and 2; the entry file itself in a child process.
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { ADMIN_KEY, EDITOR_KEY, KEYS_ENV, ROOT, STORES, TS_CHILD_ARGS, TS_CHILD_ENV, auth, build, freePort, startServer, tempDir, waitForHealth, type StoreName } from '../helper.js'
import { main, type CliContext } from '../../lib/cli/main.js'
import { openDataDir } from '../../cli-data-dir.js'
import { SCHEMAS, dataDirWithSchemas } from '../openapi/fixtures.js'

interface Run { code: number, out: string, err: string }

async function lectern (args: string[], store: StoreName = 'sqlite'): Promise<Run> {
  let out = ''
  let err = ''
  const ctx: CliContext = {
    stdout: { write: (s: string) => { out += s } },
    stderr: { write: (s: string) => { err += s } },
    version: '0.0.0-test',
    defaultStore: store,
    openDataDir
  }
  const code = await main(args, ctx)
  return { code, out, err }
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082', 'hex')

/** A data dir with the test collections, a few entries (a draft, references) and an asset. */
async function seeded (t: Test, store: StoreName): Promise<{ dataDir: string, bodies: Map<string, string> }> {
  const dataDir = dataDirWithSchemas(t)
  const app = await build(t, { CMS_STORE: store }, { dataDir, keepOpen: true })
  const write = async (url: string, payload: object): Promise<void> => {
    const res = await app.inject({ method: 'POST', url, payload, headers: auth(EDITOR_KEY) })
    t.equal(res.statusCode, 201, `POST ${url}`)
  }
  await write('/api/content/person', { _slug: 'ada', name: 'Ada' })
  await write('/api/content/person', { _slug: 'bob', name: 'Bob', _status: 'draft' })
  await write('/api/content/article', { _slug: 'first', title: 'First', kind: 'news', tags: ['b', 'a'], author: 'ada', reviewers: ['bob'], meta: { summary: 'S' }, code: 'X' })
  await write('/api/content/article', { _slug: 'second', title: 'Second', kind: 'essay', rating: 2.5, extra: { deep: [1, { a: null }], text: 'Ünïcode ✓' } })
  const boundary = 'b0undary'
  const payload = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="dot.png"\r\nContent-Type: image/png\r\n\r\n`), PNG, Buffer.from(`\r\n--${boundary}--\r\n`)])
  const up = await app.inject({ method: 'POST', url: '/api/assets', payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } })
  t.equal(up.statusCode, 201, 'asset uploaded')
  const bodies = new Map<string, string>()
  for (const url of ['/api/content/person/ada', '/api/content/person/bob', '/api/content/article/first', '/api/content/article/second']) {
    bodies.set(url, (await app.inject({ method: 'GET', url })).body)
  }
  await app.close()
  return { dataDir, bodies }
}

/** Every file of a directory tree, by relative path, with its bytes. */
function tree (dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>()
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const full = path.join(entry.parentPath, entry.name)
    out.set(path.relative(dir, full), readFileSync(full))
  }
  return out
}

const withoutTimestamps = (text: string): string => JSON.stringify(JSON.parse(text, (k, v: unknown) => k === '_created_at' || k === '_updated_at' ? undefined : v))

for (const store of STORES) {
  t.test(`store=${store}: export, import, validate`, async t => {
    const { dataDir, bodies } = await seeded(t, store)
    const out = path.join(tempDir(t), 'export')
    const exported = await lectern(['export', '--data-dir', dataDir, '--out', out, '--assets'], store)
    t.equal(exported.code, 0, 'export exits 0', exported)
    t.match(exported.out, /exported 4 entries of 2 collections, 2 schemas, 1 assets/)
    const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8'))
    t.match(manifest, { lectern: '0.0.0-test', status: 'all', locales: [null], schemas: ['article', 'person'], counts: { article: { _: 2 }, person: { _: 2 } }, assets: 1 })
    for (const [url, body] of bodies) {
      const [, , , collection, slug] = url.split('/')
      t.equal(readFileSync(path.join(out, 'content', collection ?? '', '_', `${slug ?? ''}.json`), 'utf8'), body, `${url}: the body of GET, byte for byte`)
    }
    t.same(JSON.parse(readFileSync(path.join(out, 'content', 'article', '_', 'index.json'), 'utf8')), ['second', 'first'], 'index in default_sort order (title, desc by default)')
    t.same(readFileSync(path.join(out, 'assets', 'dot.png')), PNG, 'the asset file')
    t.same(JSON.parse(readFileSync(path.join(out, 'schemas', 'article.json'), 'utf8')), SCHEMAS.article, 'the schema as stored')

    // Into an empty data dir: schemas written, every entry created, identical but for the store's timestamps.
    const fresh = path.join(tempDir(t), 'fresh')
    const imported = await lectern(['import', out, '--data-dir', fresh], store)
    t.equal(imported.code, 0, 'import exits 0', imported)
    t.match(imported.out, /imported: 4 created, 0 updated, 0 unchanged, 2 schemas \(article, person\), 0 refused/)
    const again = path.join(tempDir(t), 'again')
    t.equal((await lectern(['export', '--data-dir', fresh, '--out', again], store)).code, 0)
    for (const [file, bytes] of tree(path.join(out, 'content'))) {
      t.equal(withoutTimestamps(readFileSync(path.join(again, 'content', file), 'utf8')), withoutTimestamps(bytes.toString('utf8')), `${file} reproduced`)
    }

    // Back into its source: nothing changes, and a new export is identical byte for byte.
    const back = await lectern(['import', out, '--data-dir', dataDir], store)
    t.match(back.out, /0 created, 0 updated, 4 unchanged/)
    const second = path.join(tempDir(t), 'second')
    t.equal((await lectern(['export', '--data-dir', dataDir, '--out', second, '--assets'], store)).code, 0)
    for (const [file, bytes] of tree(out)) if (file !== 'manifest.json') t.same(readFileSync(path.join(second, file)), bytes, `${file}: byte for byte`)

    t.match(await lectern(['import', out, '--data-dir', fresh, '--dry-run'], store), { code: 0, out: /would write: 0 created, 0 updated, 4 unchanged/ })

    // validate: clean, then a field made required that one entry lacks, and a reference to a gone entry.
    t.match(await lectern(['validate', '--data-dir', dataDir], store), { code: 0, out: /every entry is valid/ })
    const article = { ...SCHEMAS.article, fields: { ...SCHEMAS.article.fields, views: { field_type: 'integer', required: true } } }
    writeFileSync(path.join(dataDir, 'types', 'article.json'), JSON.stringify(article))
    const app = await build(t, { CMS_STORE: store }, { dataDir, keepOpen: true })
    t.equal((await app.inject({ method: 'DELETE', url: '/api/content/person/bob' })).statusCode, 204)
    await app.close()
    const broken = await lectern(['validate', '--data-dir', dataDir], store)
    t.equal(broken.code, 1, 'validate exits 1 on problems')
    t.match(broken.out, /article\/_\/first: views: .*\n/)
    t.match(broken.out, /article\/_\/second: views: /)
    t.match(broken.out, /article\/_\/first reviewers: references 'bob', which is not an entry of 'person'/)
    t.match(broken.out, /3 problem\(s\)/)
  })
}

t.test('types: declarations that compile under --strict; --check fails exactly when out of date', async t => {
  const dataDir = dataDirWithSchemas(t)
  const dir = tempDir(t)
  const file = path.join(dir, 'lectern.d.ts')
  t.equal((await lectern(['types', '--check', '--data-dir', dataDir, '--out', file])).code, 1, '--check: missing file')
  t.equal((await lectern(['types', '--data-dir', dataDir, '--out', file])).code, 0)
  t.equal((await lectern(['types', '--check', '--data-dir', dataDir, '--out', file])).code, 0, '--check: up to date')
  const printed = await lectern(['types', '--types-dir', path.join(dataDir, 'types')])
  t.equal(printed.out, readFileSync(file, 'utf8'), 'printed as written')
  writeFileSync(path.join(dir, 'use.ts'), `
import type { ArticleCreate, ArticleEntry, Collections, PersonEntry } from './lectern.js'
const ok: ArticleCreate = { _slug: 'x', title: 'T', kind: 'news', tags: ['a'], author: 'ada', meta: { summary: 's' } }
// @ts-expect-error an option not in the select
const badKind: ArticleCreate = { _slug: 'x', title: 'T', kind: 'poem' }
// @ts-expect-error a required field missing
const missing: ArticleCreate = { _slug: 'x', kind: 'news' }
// @ts-expect-error an unknown field of a strict collection
const extra: ArticleCreate = { _slug: 'x', title: 'T', kind: 'news', nope: 1 }
declare const entry: ArticleEntry
const status: 'draft' | 'published' = entry._status
const author: string | PersonEntry | null | undefined = entry.author
// @ts-expect-error views is a number
const views: string | undefined = entry.views
const map: Collections['person']['entry'] | undefined = undefined
export { ok, badKind, missing, extra, status, author, views, map }
`)
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2023', types: [] }, files: ['use.ts'] }))
  writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }')
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  const tsc = await promisify(execFile)(path.join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', dir]).then(() => '', (err: { stdout: string }) => err.stdout)
  t.equal(tsc, '', 'tsc --strict: compiles, and each wrong use is refused')
  writeFileSync(path.join(dataDir, 'types', 'person.json'), JSON.stringify({ ...SCHEMAS.person, fields: { ...SCHEMAS.person.fields, age: { field_type: 'integer' } } }))
  const stale = await lectern(['types', '--check', '--data-dir', dataDir, '--out', file])
  t.equal(stale.code, 1, '--check: out of date after a schema change')
  t.match(stale.err, /out of date/)
})

t.test('usage: help, exit code 2', async t => {
  t.match(await lectern([]), { code: 2, out: /Usage: lectern <command>/ })
  t.match(await lectern(['--help']), { code: 0, out: /Commands:/ })
  for (const command of ['export', 'import', 'types', 'validate']) {
    t.match(await lectern([command, '--help']), { code: 0, out: new RegExp(`Usage: lectern ${command}`) })
  }
  t.match(await lectern(['nope']), { code: 2, err: /unknown command 'nope'/ })
  t.match(await lectern(['export', '--data-dir', 'x']), { code: 2, err: /--out <dir> is required/ })
  t.match(await lectern(['export', '--out', 'x']), { code: 2, err: /one of --server/ })
  t.match(await lectern(['export', '--out', 'x', '--server', 'ftp://x']), { code: 2 })
  t.match(await lectern(['export', '--out', 'x', '--data-dir', 'd', '--status', 'some']), { code: 2 })
  t.match(await lectern(['validate', '--data-dir', 'd', '--store', 'nope']), { code: 2 })
  t.match(await lectern(['validate', '--bogus']), { code: 2, err: /Unknown option/ })
  t.match(await lectern(['import', '--data-dir', 'd']), { code: 2, err: /one export directory/ })
  t.match(await lectern(['import', tempDir(t), '--data-dir', 'd']), { code: 2, err: /not an export/ })
  t.match(await lectern(['types', '--types-dir', '/nonexistent/types']), { code: 2 })
  t.match(await lectern(['types', '--check', '--data-dir', 'd']), { code: 2 })
  t.match(await lectern(['types', 'extra']), { code: 2, err: /unexpected argument/ })
})

t.test('against a running server with keys, through the entry file', async t => {
  const port = await freePort()
  const server = startServer({ ...KEYS_ENV, CMS_SEED: 'false', CMS_PORT: String(port), CMS_HOST: '127.0.0.1', CMS_DATA_DIR: dataDirWithSchemas(t), CMS_LOG_LEVEL: 'warn' })
  t.teardown(async () => { server.child.kill(); await server.exited })
  await waitForHealth(t, port, server.exited)
  const base = `http://127.0.0.1:${port}`
  const res = await fetch(`${base}/api/content/person`, { method: 'POST', headers: { ...auth(EDITOR_KEY), 'content-type': 'application/json' }, body: JSON.stringify({ _slug: 'ada', name: 'Ada', _status: 'draft' }) })
  t.equal(res.status, 201)
  const run = async (args: string[]): Promise<Run> => await promisify(execFile)(process.execPath, [...TS_CHILD_ARGS, path.join(ROOT, 'cli.ts'), ...args], { cwd: ROOT, env: { ...TS_CHILD_ENV, FASTIFY_AUTOLOAD_TYPESCRIPT: '1' } })
    .then(r => ({ code: 0, out: r.stdout, err: r.stderr }), (e: { code: number, stdout: string, stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }))
  const out = path.join(tempDir(t), 'export')
  const anonymous = await run(['export', '--server', base, '--out', out, '--status', 'published'])
  t.match(anonymous, { code: 0, out: /exported 0 entries/ }, 'a draft is not exported without a key')
  const withKey = await run(['export', '--server', base, '--key', ADMIN_KEY, '--out', out])
  t.match(withKey, { code: 0, out: /exported 1 entries/ })
  t.ok(existsSync(path.join(out, 'content', 'person', '_', 'ada.json')))
  // A schema the server lacks is created; one partial cannot be: reported, exit 1.
  writeFileSync(path.join(out, 'schemas', 'note.json'), JSON.stringify({ name: 'note', fields: { text: { field_type: 'text' } } }))
  writeFileSync(path.join(out, 'schemas', 'seo.json'), JSON.stringify({ name: 'seo', reusable: true, fields: { t: { field_type: 'string' } } }))
  const imported = await run(['import', out, '--server', base, '--key', ADMIN_KEY])
  t.equal(imported.code, 1, 'exit 1: the partial was refused')
  t.match(imported.out, /0 created, 0 updated, 1 unchanged, 1 schemas \(note\), 1 refused/)
  t.match(imported.err, /schema seo: a reusable partial cannot be created through the API/)
  t.match(await run(['import', out, '--server', base, '--key', 'wrong-key-0123456789abcdef']), { code: 1, err: /refused: person\/_\/ada: 401/ })
  t.match(await run(['validate', '--server', base, '--key', ADMIN_KEY]), { code: 0, out: /every entry is valid/ })
  t.match(await run(['--help']), { code: 0, out: /Usage: lectern/ })
  t.match(await run(['export']), { code: 2 })
})
