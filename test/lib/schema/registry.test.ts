import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { CmsError } from '../../../lib/errors.js'
import { KeyedMutex } from '../../../lib/mutex.js'
import { SchemaFileRegistry, type SchemaWriteLock } from '../../../lib/schema/registry.js'

interface Logged { level: string, obj: object, msg: string }

function setup (t: Test, files: Record<string, unknown> = {}, shared?: { dir: string, lock: SchemaWriteLock }): { registry: SchemaFileRegistry, dir: string, logs: Logged[] } {
  const dir = shared?.dir ?? mkdtempSync(path.join(os.tmpdir(), 'lectern-registry-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  for (const [file, content] of Object.entries(files)) {
    writeFileSync(path.join(dir, file), typeof content === 'string' ? content : JSON.stringify(content, null, 2))
  }
  const logs: Logged[] = []
  const log = (level: string) => (obj: object, msg: string) => { logs.push({ level, obj, msg }) }
  const registry = new SchemaFileRegistry({ typesDir: dir, log: { info: log('info'), warn: log('warn'), error: log('error') }, ...(shared === undefined ? {} : { lock: shared.lock }) })
  return { registry, dir, logs }
}

async function rejectsWith (t: Test, promise: Promise<unknown>, code: string, errors?: string[]): Promise<void> {
  try {
    await promise
    t.fail(`expected ${code}`)
  } catch (err) {
    t.ok(err instanceof CmsError, 'a CmsError')
    t.equal((err as CmsError).code, code, code)
    if (errors !== undefined) t.strictSame((err as CmsError).errors, errors)
  }
}

const seo = { name: 'seo', reusable: true, fields: { meta_title: { field_type: 'string' } } }
const post = { name: 'post', extends: 'seo', fields: { title: { field_type: 'string', required: true } } }
const author = { name: 'author', fields: { name: { field_type: 'string' } } }

t.test('load: every readable schema is named; collections leave out reusable and broken ones', async t => {
  const { registry, logs } = setup(t, {
    'seo.json5': '// partial\n{ name: \'seo\', reusable: true, fields: { meta_title: { field_type: \'string\' } } }',
    'post.json': post,
    'author.json': author,
    'author.json5': '{ name: "author", fields: { name: { field_type: "string" }, from_json5: { field_type: "boolean" } } }',
    'orphan.json': { name: 'orphan', extends: 'ghost', fields: {} },
    'a.json': { name: 'a', extends: 'b', fields: {} },
    'b.json': { name: 'b', extends: 'a', fields: {} },
    'typo.json': { name: 'typo', fields: { x: { field_type: 'strin' } } },
    'look.json': { name: 'look', fields: { x: { field_type: 'string', pattern: '(?<=a)b' } } },
    'broken.json': '{ "name": "broken", ',
    'renamed.json': { name: 'other', fields: {} },
    'Bad-Name.json': { name: 'bad', fields: {} },
    'headline.json': { type: 'object', properties: { _slug: { type: 'string' }, text: { type: 'string' } }, required: ['text'] }
  })
  await registry.load()
  t.strictSame(registry.names(), ['a', 'author', 'b', 'headline', 'look', 'orphan', 'post', 'seo', 'typo'],
    'unparsable and misnamed files are skipped; invalid and unresolvable ones are still named')
  t.strictSame(registry.collections().map(m => m.schema.name), ['author', 'headline', 'post'])
  t.ok(registry.collection('post'))
  t.equal(registry.collection('seo'), null, 'reusable: no collection')
  t.equal(registry.collection('orphan'), null)
  t.equal(registry.collection('nope'), null)
  t.strictSame(Object.keys(registry.collection('author')?.schema.fields ?? {}), ['name', 'from_json5'], '.json5 wins over .json')
  t.strictSame(Object.keys(registry.collection('post')?.schema.fields ?? {}), ['meta_title', 'title'])
  t.strictSame(registry.collection('headline')?.schema.fields.text, { field_type: 'string', required: true })
  t.strictSame(registry.resolvedSchema('seo')?.reusable, true)

  const warned = logs.filter(l => l.level === 'warn').map(l => l.msg)
  t.ok(warned.includes("schema 'orphan' is left out: extends: unknown schema 'ghost'"))
  t.ok(warned.includes("schema 'a' is left out: extends: cycle a → b → a"))
  t.ok(warned.includes("schema 'typo' is left out: x: unknown field type \"strin\""))
  t.ok(warned.includes("schema 'look' is left out: x: pattern cannot use lookahead or lookbehind assertions ((?=, (?!, (?<=, (?<!): patterns run on a linear-time matcher"),
    'a pattern the matcher cannot run leaves its schema out, logged, as an unknown parent does')
  t.ok(warned.some(m => /^schema file skipped: it cannot be parsed/.test(m)), 'unparsable file logged')
  t.ok(warned.includes('schema file skipped: it has the name "other", not \'renamed\''))
  t.ok(warned.some(m => m.startsWith('schema file ignored')), 'a bad file name is logged')
  t.strictSame(registry.problems('orphan'), ["extends: unknown schema 'ghost'"])
  t.strictSame(registry.problems('post'), [])
})

t.test('readRaw: the stored document, .json5 first; 404, 400', async t => {
  const headline = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { text: { type: 'string' } } }
  const { registry } = setup(t, {
    'author.json': author,
    'author.json5': '// comment\n{ name: "author", fields: {} }',
    'headline.json': headline,
    'broken.json': '{ nope',
    'renamed.json': { name: 'other', fields: {} },
    'typo.json': { name: 'typo', fields: { x: { field_type: 'strin' } } }
  })
  await registry.load()
  t.strictSame(await registry.readRaw('author'), { name: 'author', fields: {} })
  t.strictSame(await registry.readRaw('headline'), headline, 'JSON Schema notation comes back as stored')
  t.strictSame(await registry.readRaw('typo'), { name: 'typo', fields: { x: { field_type: 'strin' } } }, 'an invalid definition is still readable')
  await rejectsWith(t, registry.readRaw('missing'), 'NOT_FOUND')
  await rejectsWith(t, registry.readRaw('broken'), 'BAD_REQUEST')
  await rejectsWith(t, registry.readRaw('renamed'), 'BAD_REQUEST')
  await rejectsWith(t, registry.readRaw('../etc/passwd'), 'BAD_REQUEST')
})

t.test('create: rules 2, 3, 4 in order, then conflict and resolution; writes <name>.json', async t => {
  const { registry, dir } = setup(t, { 'seo.json': seo })
  await registry.load()
  await rejectsWith(t, registry.create([]), 'BAD_REQUEST')
  await rejectsWith(t, registry.create({ name: 'Bad', fields: { x: { field_type: 'nope' } } }), 'BAD_REQUEST', undefined)
  await rejectsWith(t, registry.create({ name: 'x'.repeat(65), fields: {} }), 'BAD_REQUEST')
  await rejectsWith(t, registry.create({ name: 'part', reusable: true, fields: { x: { field_type: 'nope' } } }), 'BAD_REQUEST')
  await rejectsWith(t, registry.create({ name: 'p', fields: { a: { field_type: 'strin' }, b: { field_type: 'numbr' } } }), 'VALIDATION_FAILED',
    ['a: unknown field type "strin"', 'b: unknown field type "numbr"'])
  await rejectsWith(t, registry.create({ name: 'p', extends: 'ghost', fields: {} }), 'VALIDATION_FAILED', ["extends: unknown schema 'ghost'"])
  await rejectsWith(t, registry.create({ name: 'p', display_field: 'nope', fields: {} }), 'VALIDATION_FAILED', ["display_field: 'nope' is not a field of this schema"])
  t.strictSame(readdirSync(dir), ['seo.json'], 'nothing written by a failed create')

  const written = await registry.create(post)
  t.strictSame(written, post)
  t.equal(readFileSync(path.join(dir, 'post.json'), 'utf8'), `${JSON.stringify(post, null, 2)}\n`, 'pretty-printed, trailing newline')
  t.strictSame(Object.keys(registry.collection('post')?.schema.fields ?? {}), ['meta_title', 'title'], 'loaded and compiled at once')
  t.strictSame(registry.names(), ['post', 'seo'])
  await rejectsWith(t, registry.create(post), 'CONFLICT')
})

t.test('create refuses a name whose only file is unparsable or .json5', async t => {
  const { registry } = setup(t, { 'broken.json': '{', 'fancy.json5': '{ name: "fancy", fields: {} }' })
  await registry.load()
  await rejectsWith(t, registry.create({ name: 'broken', fields: {} }), 'CONFLICT')
  await rejectsWith(t, registry.create({ name: 'fancy', fields: {} }), 'CONFLICT')
})

t.test('update: rules 2, 4, 5, 6; rewrites .json5 when it exists; recompiles the schema and its children only', async t => {
  const { registry, dir } = setup(t, {
    'seo.json5': '// will be rewritten\n{ name: "seo", reusable: true, fields: { meta_title: { field_type: "string" } } }',
    'seo.json': { name: 'seo', reusable: true, fields: { stale: { field_type: 'string' } } },
    'post.json': post,
    'page.json': { name: 'page', extends: 'post', fields: {} },
    'author.json': author
  })
  await registry.load()
  const before = { post: registry.collection('post'), page: registry.collection('page'), author: registry.collection('author') }

  await rejectsWith(t, registry.update('seo', { name: 'SEO', fields: {} }), 'BAD_REQUEST')
  await rejectsWith(t, registry.update('seo', { name: 'other', fields: { x: { field_type: 'bad' } } }), 'VALIDATION_FAILED', ['x: unknown field type "bad"'])
  await rejectsWith(t, registry.update('seo', { name: 'other', fields: {} }), 'BAD_REQUEST')
  await rejectsWith(t, registry.update('ghost', { name: 'ghost', fields: {} }), 'NOT_FOUND')
  await rejectsWith(t, registry.update('seo', { name: 'seo', reusable: true, extends: 'page', fields: {} }), 'VALIDATION_FAILED',
    ['extends: cycle seo → page → post → seo'])

  const next = { name: 'seo', reusable: true, fields: { meta_title: { field_type: 'string' }, canonical: { field_type: 'url' } } }
  t.strictSame(await registry.update('seo', next), next)
  t.equal(readFileSync(path.join(dir, 'seo.json5'), 'utf8'), `${JSON.stringify(next, null, 2)}\n`, 'the .json5 file is rewritten (as JSON, which is JSON5)')
  t.strictSame(JSON.parse(readFileSync(path.join(dir, 'seo.json'), 'utf8')).fields, { stale: { field_type: 'string' } }, 'the shadowed .json is untouched')
  t.not(registry.collection('post'), before.post, 'a child is recompiled')
  t.not(registry.collection('page'), before.page, 'a grandchild is recompiled')
  t.equal(registry.collection('author'), before.author, 'an unrelated collection keeps its compiled model')
  t.strictSame(Object.keys(registry.collection('page')?.schema.fields ?? {}), ['meta_title', 'canonical', 'title'])
  t.strictSame(registry.collection('post')?.validate({ title: 'x', canonical: 'nope' }), ['canonical: must be an absolute http(s) URL or an asset path (/api/assets/...)'])

  // PUT may keep a partial reusable, and may turn a collection strict.
  await registry.update('post', { ...post, strict: true })
  t.strictSame(registry.collection('page')?.validate({ title: 'x', extra: 1 }), ['extra: is not a field of this schema (the schema is strict)'])
})

t.test('update of a JSON Schema notation file rewrites it in native notation', async t => {
  const { registry, dir } = setup(t, { 'headline.json': { type: 'object', properties: { text: { type: 'string' } } } })
  await registry.load()
  const next = { name: 'headline', fields: { text: { field_type: 'string', required: true } } }
  await registry.update('headline', next)
  t.strictSame(JSON.parse(readFileSync(path.join(dir, 'headline.json'), 'utf8')), next)
  t.strictSame(await registry.readRaw('headline'), next)
})

t.test('extends: null is no parent, in JSON and JSON5 files, create, update and readRaw (contract §5)', async t => {
  const fields = { title: { field_type: 'string' } }
  const { registry, dir } = setup(t, {
    'onjson.json': { name: 'onjson', extends: null, fields },
    'onjson5.json5': '{ name: "onjson5", extends: null, label: null, fields: { title: { field_type: "string" } } }'
  })
  await registry.load()
  for (const name of ['onjson', 'onjson5']) {
    t.strictSame(registry.problems(name), [], `${name} loads`)
    t.equal(registry.collection(name)?.schema.extends, null, `${name}: resolved without parent`)
    t.equal((await registry.readRaw(name)).extends, null, `${name}: read back as null`)
  }
  const page = { name: 'page', extends: null, label: null, description: null, default_order: null, fields }
  t.strictSame(await registry.create(page), page)
  t.strictSame(JSON.parse(readFileSync(path.join(dir, 'page.json'), 'utf8')), page, 'written as null')
  t.strictSame(await registry.readRaw('page'), page)
  const next = { name: 'onjson5', extends: null, fields: { ...fields, body: { field_type: 'text' } } }
  t.strictSame(await registry.update('onjson5', next), next)
  t.strictSame(JSON.parse(readFileSync(path.join(dir, 'onjson5.json5'), 'utf8')), next, 'the .json5 file rewritten with null')
  t.strictSame(Object.keys(registry.collection('onjson5')?.schema.fields ?? {}), ['title', 'body'])
})

t.test('remove: 400 on a bad name, 404 when missing, both files removed, children left out and logged', async t => {
  const { registry, dir, logs } = setup(t, { 'seo.json5': JSON.stringify(seo), 'seo.json': seo, 'post.json': post, 'author.json': author })
  await registry.load()
  await rejectsWith(t, registry.remove('../post'), 'BAD_REQUEST')
  await rejectsWith(t, registry.remove('ghost'), 'NOT_FOUND')
  await registry.remove('seo')
  t.strictSame(readdirSync(dir).sort(), ['author.json', 'post.json'])
  t.strictSame(registry.names(), ['author', 'post'])
  t.equal(registry.collection('post'), null, 'a child of a deleted parent is left out')
  t.ok(logs.some(l => l.level === 'warn' && l.msg === "schema 'post' is left out: extends: unknown schema 'seo'"))
  await registry.create({ ...seo, reusable: false })
  t.ok(registry.collection('post'), 'and comes back with its parent')
})

t.test('writes are serialized: concurrent creates of one name give one success and conflicts', async t => {
  const { registry, dir } = setup(t)
  await registry.load()
  const results = await Promise.allSettled(Array.from({ length: 5 }, async () => await registry.create(author)))
  t.equal(results.filter(r => r.status === 'fulfilled').length, 1)
  t.ok(results.filter(r => r.status === 'rejected').every(r => (r.reason as CmsError).code === 'CONFLICT'))
  const updates = Array.from({ length: 8 }, (_, i) => ({ name: 'author', description: `v${i}`, fields: {} }))
  await Promise.all(updates.map(async u => await registry.update('author', u)))
  t.equal(JSON.parse(readFileSync(path.join(dir, 'author.json'), 'utf8')).description, 'v7', 'the last write in arrival order wins')
  t.equal(registry.collection('author')?.schema.description, 'v7', 'memory agrees with the disk')
  t.strictSame(readdirSync(dir), ['author.json'], 'no temp files')
  await registry.idle()
})

/** What the PostgreSQL advisory lock is to processes, for registries of one process: one holder at a time, counted. */
function sharedLock (): SchemaWriteLock & { taken: number, holders: number, most: number } {
  const mutex = new KeyedMutex()
  const lock = {
    taken: 0,
    holders: 0,
    most: 0,
    run: async <T>(task: () => Promise<T>): Promise<T> => await mutex.run('schemas', async () => {
      lock.taken++
      lock.most = Math.max(lock.most, ++lock.holders)
      try {
        return await task()
      } finally {
        lock.holders--
      }
    })
  }
  return lock
}

t.test('with a shared types directory: writes take the lock and decide against the directory as it is now', async t => {
  const lock = sharedLock()
  const first = setup(t, {}, { dir: mkdtempSync(path.join(os.tmpdir(), 'lectern-registry-')), lock })
  const second = setup(t, {}, { dir: first.dir, lock })
  await first.registry.load()
  await second.registry.load()
  t.equal(lock.taken, 2, 'the start-up read (and its temp file sweep) holds the lock')

  // Racing creates of one name from two "processes": one wins, the other sees its file.
  const results = await Promise.allSettled([first.registry.create(author), second.registry.create(author), first.registry.create(author), second.registry.create(author)])
  t.equal(results.filter(r => r.status === 'fulfilled').length, 1, 'one create of the name succeeds')
  t.ok(results.filter(r => r.status === 'rejected').every(r => (r.reason as CmsError).code === 'CONFLICT'), 'the others are CONFLICT')
  t.equal(lock.most, 1, 'never two holders at once')

  // The second has not heard of `seo` (no reload): its write reads the directory first.
  writeFileSync(path.join(first.dir, 'seo.json'), JSON.stringify(seo))
  await second.registry.create(post)
  t.equal(second.registry.collection('post')?.schema.fields.meta_title?.field_type, 'string', 'the parent written by the other is known to the write')
  await first.registry.remove('post')
  await rejectsWith(t, second.registry.update('post', post), 'NOT_FOUND')
  t.strictSame(readdirSync(first.dir).sort(), ['author.json', 'seo.json'], 'no temp files')
})

t.test('reload reads the directory again and leaves temp files alone (another process may be writing)', async t => {
  const { registry, dir } = setup(t, { 'author.json': author })
  await registry.load()
  writeFileSync(path.join(dir, '.write.in-progress.tmp'), '{')
  writeFileSync(path.join(dir, 'seo.json'), JSON.stringify(seo))
  await registry.reload()
  t.strictSame(registry.names(), ['author', 'seo'])
  t.ok(readdirSync(dir).includes('.write.in-progress.tmp'), 'the temp file stays')
})

t.test('a file-system failure is a generic internal error, logged', async t => {
  const { registry, dir, logs } = setup(t)
  await registry.load()
  rmSync(dir, { recursive: true, force: true })
  await rejectsWith(t, registry.create(author), 'INTERNAL')
  t.ok(logs.some(l => l.level === 'error'))
  t.strictSame(registry.names(), [], 'nothing recorded')
})
