import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { interpretSchemaText, parseSchemaText } from '../../../lib/schema/parse.js'
import { SchemaFiles } from '../../../lib/schema/files.js'
import { writeFileAtomic } from '../../../lib/durable.js'

function tempDir (t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-parse-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

t.test('JSON5 text: comments, unquoted keys, single quotes, trailing commas', async t => {
  t.strictSame(parseSchemaText(`// a comment
  { name: 'post', /* inline */ fields: { title: { field_type: "string", }, }, }`), { name: 'post', fields: { title: { field_type: 'string' } } })
  t.strictSame(parseSchemaText('{"name":"a","fields":{}}'), { name: 'a', fields: {} }, 'JSON is JSON5')
  t.throws(() => parseSchemaText('{ name: '))
})

t.test('interpretSchemaText: valid, invalid and unreadable files', async t => {
  const valid = interpretSchemaText('{ name: "post", fields: { title: { field_type: "string" } } }', 'post')
  t.equal(valid.kind, 'valid')
  t.equal(valid.kind === 'valid' && valid.notation, 'native')

  const invalid = interpretSchemaText('{ name: "post", fields: { title: { field_type: "strin" } } }', 'post')
  t.equal(invalid.kind, 'invalid')
  t.strictSame(invalid.kind === 'invalid' && invalid.errors, ['title: unknown field type "strin"'])

  const unparsable = interpretSchemaText('{ name: ', 'post')
  t.equal(unparsable.kind, 'unreadable')
  t.match(unparsable.kind === 'unreadable' && unparsable.problem, /^cannot be parsed: /)

  const array = interpretSchemaText('[1]', 'post')
  t.strictSame(array, { kind: 'unreadable', problem: 'is not a JSON object' })

  const renamed = interpretSchemaText('{ "name": "other", "fields": {} }', 'post')
  t.strictSame(renamed, { kind: 'unreadable', problem: 'has the name "other", not \'post\'' })

  const jsonSchema = interpretSchemaText('{ "type": "object", "properties": { "_slug": { "type": "string" }, "t": { "type": "string" } } }', 'headline')
  t.equal(jsonSchema.kind, 'valid')
  if (jsonSchema.kind === 'valid') {
    t.equal(jsonSchema.notation, 'json-schema')
    t.equal(jsonSchema.definition.name, 'headline', 'the name is the file name')
    t.strictSame(jsonSchema.raw, { type: 'object', properties: { _slug: { type: 'string' }, t: { type: 'string' } } }, 'raw is the stored document')
  }
  const badJsonSchema = interpretSchemaText('{ "type": "object", "properties": { "t": { "type": "null" } } }', 'x')
  t.strictSame(badJsonSchema.kind === 'invalid' && badJsonSchema.errors, ['t: unsupported JSON Schema type "null"'])
})

t.test('SchemaFiles: .json5 wins over .json; invalid names are listed as ignored', async t => {
  const dir = tempDir(t)
  writeFileSync(path.join(dir, 'post.json'), '{}')
  writeFileSync(path.join(dir, 'post.json5'), '{}')
  writeFileSync(path.join(dir, 'author.json'), '{}')
  writeFileSync(path.join(dir, 'seo.json5'), '{}')
  writeFileSync(path.join(dir, 'Bad Name.json'), '{}')
  writeFileSync(path.join(dir, 'notes.txt'), '')
  writeFileSync(path.join(dir, '.hidden.json'), '{}')
  mkdirSync(path.join(dir, 'folder.json'))
  const files = new SchemaFiles(dir)
  const { files: listed, ignored } = await files.list()
  t.strictSame([...listed.entries()].sort(), [
    ['author', path.join(dir, 'author.json')],
    ['post', path.join(dir, 'post.json5')],
    ['seo', path.join(dir, 'seo.json5')]
  ])
  t.strictSame(ignored, ['Bad Name.json'])
  t.equal(await files.locate('post'), path.join(dir, 'post.json5'))
  t.equal(await files.locate('author'), path.join(dir, 'author.json'))
  t.equal(await files.locate('nope'), null)
  t.throws(() => files.jsonPath('../escape'), /invalid schema name/, 'a bad name never becomes a path')
  await t.rejects(files.read('../../etc/passwd'), /invalid schema name/)

  t.equal(await files.remove('post'), true)
  t.notOk(readdirSync(dir).includes('post.json'), 'both files removed')
  t.notOk(readdirSync(dir).includes('post.json5'))
  t.equal(await files.remove('post'), false)
})

t.test('writes are atomic, pretty-printed with a trailing newline, and leave no temp file', async t => {
  const dir = tempDir(t)
  const files = new SchemaFiles(dir)
  const target = files.jsonPath('post')
  await files.write(target, { name: 'post', fields: { a: { field_type: 'string' } } })
  t.equal(readFileSync(target, 'utf8'), '{\n  "name": "post",\n  "fields": {\n    "a": {\n      "field_type": "string"\n    }\n  }\n}\n')
  await Promise.all(Array.from({ length: 20 }, async (_, i) => { await writeFileAtomic(target, `{"n":${i}}\n`) }))
  t.match(readFileSync(target, 'utf8'), /^\{"n":\d+\}\n$/, 'concurrent writers: one whole version wins')
  t.strictSame(readdirSync(dir), ['post.json'], 'no temp files are left')
})

t.test('stale temp files of an interrupted write are removed', async t => {
  const dir = tempDir(t)
  writeFileSync(path.join(dir, '.post.json.0f8fad5b-d9cb-469f-a165-70867728950e.tmp'), '{"half')
  writeFileSync(path.join(dir, '.keep'), '')
  t.equal(await new SchemaFiles(dir).removeStaleTempFiles(), 1)
  t.strictSame(readdirSync(dir), ['.keep'])
})
