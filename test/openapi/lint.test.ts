// The served document passes Redocly's recommended rules with no error, in several
// configurations, and says what contract §15 asks of it (one lint run for every configuration).
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { ERROR_KINDS } from '../../lib/errors.js'
import { KEYS_ENV, ROOT, tempDir, type Env } from '../helper.js'
import { appWithSchemas, documentOf } from './fixtures.js'
import type { OpenApiDocument, Operation } from '../../lib/openapi/document.js'

const CONFIGS: Record<string, Env> = {
  'keys-off': {},
  'keys-on': KEYS_ENV,
  'locales-environments-cors': { ...KEYS_ENV, CMS_LOCALES: 'en,fr', CMS_ENVIRONMENTS: 'main,staging', CMS_CORS_ORIGINS: 'https://app.example.org' }
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'] as const

function operations (doc: OpenApiDocument): Array<[string, string, Operation]> {
  return Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.entries(item).filter(([m]) => (METHODS as readonly string[]).includes(m)).map(([m, op]): [string, string, Operation] => [p, m, op]))
}

t.test('Redocly lint: no error in any configuration', async t => {
  const dir = tempDir(t)
  const files: string[] = []
  const docs: Record<string, OpenApiDocument> = {}
  for (const [name, env] of Object.entries(CONFIGS)) {
    const doc = await documentOf(await appWithSchemas(t, env))
    docs[name] = doc
    const file = path.join(dir, `${name}.json`)
    writeFileSync(file, JSON.stringify(doc))
    files.push(file)
  }
  const redocly = path.join(ROOT, 'node_modules', '.bin', 'redocly')
  const { stdout } = await promisify(execFile)(redocly, ['lint', ...files, '--format=json'], { maxBuffer: 64 << 20 })
  // One JSON report per file, back to back.
  const reports = JSON.parse(`[${stdout.slice(stdout.indexOf('{')).replace(/\}\{/g, '},{')}]`) as Array<{ totals: { errors: number }, problems: Array<{ severity: string }> }>
  t.equal(reports.length, files.length, 'a report per configuration')
  for (const [i, report] of reports.entries()) {
    t.equal(report.totals.errors, 0, `${Object.keys(CONFIGS)[i] ?? ''}: no error`, { errors: report.problems.filter(p => p.severity === 'error').slice(0, 10) })
  }

  t.test('keys off: no security scheme, no 401 or 403; keys on: required on guarded routes, optional on reads', async t => {
    const off = docs['keys-off']!
    t.same(off.security, [{}])
    t.notOk(off.components.securitySchemes)
    for (const [, , op] of operations(off)) {
      t.notOk(op.security, 'no security')
      t.notOk(op.responses?.['401'] ?? op.responses?.['403'], 'no 401/403')
    }
    const on = docs['keys-on']!
    const sec = (p: string, m: string): unknown => on.paths[p]?.[m]?.security
    for (const [p, m] of [['/api/assets', 'post'], ['/api/assets/{path}', 'delete'], ['/api/transform/cache/invalidate', 'post'],
      ['/api/content/{collection}', 'post'], ['/api/content/article/{slug}', 'patch'], ['/api/schemas', 'post'], ['/api/webhooks/deliveries', 'get']] as const) {
      t.same(sec(p, m), [{ bearer: [] }, { apiKey: [] }], `${m} ${p} needs a key`)
      t.ok(on.paths[p]?.[m]?.responses?.['401']?.headers?.['WWW-Authenticate'], `${m} ${p} 401 declares WWW-Authenticate`)
    }
    for (const [p, m] of [['/api/content/article', 'get'], ['/api/assets/{path}', 'head'], ['/api/collections', 'get']] as const) {
      t.same(sec(p, m), [{}, { bearer: [] }, { apiKey: [] }], `${m} ${p}: a key is optional`)
    }
  })

  t.test('operation ids, plain path names, HEAD, multipart, error codes, headers', async t => {
    const doc = docs['locales-environments-cors']!
    const ids = operations(doc).map(([, , op]) => op.operationId)
    t.ok(ids.every(id => typeof id === 'string' && id !== ''), 'every operation has an id')
    t.equal(new Set(ids).size, ids.length, 'ids are unique')
    t.notOk(Object.keys(doc.paths).some(p => p.includes('*')), 'no wildcard path')
    const serve = doc.paths['/api/assets/{path}']!
    t.match(serve.get?.parameters?.find(p => p.in === 'path'), { name: 'path', required: true })
    t.ok(doc.paths['/api/transform/{path}']?.get)
    for (const [p, item] of Object.entries(doc.paths)) if (item.get !== undefined) t.ok(item.head, `HEAD ${p}`)
    t.notOk(Object.values(serve.head?.responses ?? {}).some(r => r.content !== undefined), 'HEAD answers have no body')
    const upload = doc.paths['/api/assets']!.post!.requestBody!.content['multipart/form-data']!.schema
    t.match(upload, { type: 'object', required: ['file'], properties: { file: { anyOf: [{ format: 'binary' }, { type: 'array', items: { format: 'binary' } }] } } })
    const codes = (doc.components.schemas?.ErrorReply?.properties as Record<string, { enum?: string[] }>).code?.enum
    t.same(codes, Object.keys(ERROR_KINDS), 'error codes from lib/errors.ts')
    const got = serve.get!.responses!
    t.ok(got['200']?.headers?.ETag && got['206']?.headers?.['Content-Range'] && got['416']?.headers?.['Content-Range'] && got['304']?.headers?.ETag)
    t.ok(doc.paths['/api/transform/{path}']!.get!.responses!['200']?.headers?.['Cache-Control'])
    t.notOk(doc.paths['/api/transform/{path}']!.get!.responses!['304']?.content, 'a 304 has no body')
    t.ok(doc.paths['/api/transform/cache/invalidate']!.post!.responses!['413'] && doc.paths['/api/transform/cache/invalidate']!.post!.responses!['415'])
    t.ok(got['200']?.headers?.['Access-Control-Allow-Origin'], 'CORS headers with CORS on')
    t.notOk(docs['keys-on']!.paths['/api/assets/{path}']!.get!.responses!['200']?.headers?.['Access-Control-Allow-Origin'], 'not with CORS off')
  })
})
