// The `lectern` command (contract §16): types (compiles under --strict; --check), usage and exit
// codes, and against a running server with keys, partly through the entry file itself.
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { ADMIN_KEY, EDITOR_KEY, KEYS_ENV, ROOT, TS_CHILD_ARGS, TS_CHILD_ENV, auth, freePort, startServer, tempDir, waitForHealth } from '../helper.js'
import { SCHEMAS, dataDirWithSchemas } from '../openapi/fixtures.js'
import { lectern, type Run } from './run.js'

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
  // The entry file in a child process for a few calls; the rest in this process, the same code over HTTP.
  const run = async (args: string[]): Promise<Run> => await promisify(execFile)(process.execPath, [...TS_CHILD_ARGS, path.join(ROOT, 'cli.ts'), ...args], { cwd: ROOT, env: { ...TS_CHILD_ENV, FASTIFY_AUTOLOAD_TYPESCRIPT: '1' } })
    .then(r => ({ code: 0, out: r.stdout, err: r.stderr }), (e: { code: number, stdout: string, stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }))
  const out = path.join(tempDir(t), 'export')
  const anonymous = await run(['export', '--server', base, '--out', out, '--status', 'published'])
  t.match(anonymous, { code: 0, out: /exported 0 entries/ }, 'a draft is not exported without a key')
  const withKey = await lectern(['export', '--server', base, '--key', ADMIN_KEY, '--out', out])
  t.match(withKey, { code: 0, out: /exported 1 entries/ })
  t.ok(existsSync(path.join(out, 'content', 'person', '_', 'ada.json')))
  // A schema the server lacks is created; one partial cannot be: reported, exit 1.
  writeFileSync(path.join(out, 'schemas', 'note.json'), JSON.stringify({ name: 'note', fields: { text: { field_type: 'text' } } }))
  writeFileSync(path.join(out, 'schemas', 'seo.json'), JSON.stringify({ name: 'seo', reusable: true, fields: { t: { field_type: 'string' } } }))
  const imported = await lectern(['import', out, '--server', base, '--key', ADMIN_KEY])
  t.equal(imported.code, 1, 'exit 1: the partial was refused')
  t.match(imported.out, /0 created, 0 updated, 1 unchanged, 1 schemas \(note\), 1 refused/)
  t.match(imported.err, /schema seo: a reusable partial cannot be created through the API/)
  t.match(await lectern(['import', out, '--server', base, '--key', 'wrong-key-0123456789abcdef']), { code: 1, err: /refused: person\/_\/ada: 401/ })
  t.match(await lectern(['validate', '--server', base, '--key', ADMIN_KEY]), { code: 0, out: /every entry is valid/ })
  t.match(await run(['--help']), { code: 0, out: /Usage: lectern/ })
  t.match(await run(['export']), { code: 2 })
})
