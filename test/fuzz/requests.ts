// Generated requests for the fuzz suite (issue 28): every route template of the API with paths,
// query strings, headers and bodies (JSON, schema definitions, multipart) that are sometimes
// right, sometimes nearly right and sometimes junk. What a request is made of stays printable,
// so a failure can be kept as a fixed regression case.
import fc from 'fast-check'
import { ADMIN_KEY, EDITOR_KEY, VIEWER_KEY } from '../helper.js'

export interface FuzzRequest {
  method: string
  url: string
  headers: Record<string, string>
  body?: string
}

// ---- building blocks ------------------------------------------------------------------------

const COLLECTIONS = ['posts', 'posts', 'posts', 'authors', 'authors', 'base', 'fuzz', 'nope']
const SLUGS = ['first', 'ann', 'x', 'hello-world']
const FIELDS = ['title', 'code', 'uid', 'kind', 'tags', 'rating', 'price', 'featured', 'published_on', 'seo', 'seo.title', 'blocks', 'author', 'related', 'meta', 'name', 'handle', 'constructor', '_slug', '_created_at', '_status']
const OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'contains', 'starts', 'exists', 'like', '']

/** Text that stresses parsers: empty, long, Unicode, control characters, encodings, path tricks. */
export const nastyText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', '0', '-1', '1e20', '99999999999999999999', 'NaN', 'null', 'true', '..', '../..', '/', '\\', '%', '%00',
    '%c0%ae', '%2e%2e', '%2F', '%ff', '__proto__', 'constructor', '😀', 'é', 'a b', 'a\u0000b', '\u202e', '[', ']', '{}', '[]'),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.date({ noInvalidDate: true }).map(d => d.toISOString()),
  fc.constantFrom(100, 300, 1000).map(n => 'a'.repeat(n))
)

/** A path segment: a known name, a slug, or anything, encoded or (sometimes) raw. */
export function segment (known: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...known) },
    { weight: 2, arbitrary: nastyText.map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.constantFrom('%c0%ae', '%ff', '%e0%80', '%', '%zz', '%2e%2e', '..', '.', '%00', 'a%2Fb', 'x'.repeat(600), '%41'.repeat(200)) }
  )
}

const queryKey = fc.oneof(
  fc.constantFrom('_page', '_per_page', '_sort', '_order', '_status', '_q', '_fields', '_resolve', '_locale', '_environment', '_', '_after',
    'slug', 'exclude', 'folder', 'mime', 'status', 'w', 'h', 'fit', 'format', 'q', 'path', 'key', 'api_key'),
  fc.tuple(fc.constantFrom(...FIELDS), fc.constantFrom(...OPS)).map(([f, op]) => op === '' ? f : `${f}[${op}]`),
  nastyText
)
const queryValue = fc.oneof(
  { weight: 3, arbitrary: nastyText },
  { weight: 2, arbitrary: fc.constantFrom('1', '2', '1000', '1001', '0', 'asc', 'desc', 'all', 'draft', 'published', '-title', 'title,-rating', 'seo.title', '1', '5', '6', 'true', 'author', 'cover', 'webp', 'auto', 'image/', '100') }
)
export const queryString: fc.Arbitrary<string> = fc.array(fc.tuple(queryKey, queryValue, fc.boolean()), { maxLength: 5 }).map(pairs => {
  if (pairs.length === 0) return ''
  // Mostly encoded as a client would; sometimes raw.
  return '?' + pairs.map(([k, v, raw]) => raw ? `${k}=${v}` : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')
})

// ---- route templates ----------------------------------------------------------------------

/** How often a template is drawn, its methods, and its paths. Content routes are drawn most. */
type Template = [weight: number, methods: string[], path: fc.Arbitrary<string>]

const collection = segment(COLLECTIONS)
const slug = segment(SLUGS)
// Writes go to schemas of their own: a DELETE of `posts` would leave most requests a 404.
const schemaName = segment(['fuzz', 'fuzz_two', 'nope', 'Bad Name', 'a'.repeat(65)])
const assetPath = fc.array(segment(['a.txt', 'photos', 'img.png', 'x', '.hidden', 'gone.txt']), { minLength: 1, maxLength: 3 }).map(s => s.join('/'))

const TEMPLATES: Template[] = [
  [1, ['GET', 'HEAD'], fc.constant('/health')],
  [1, ['GET', 'HEAD'], fc.constant('/api/openapi.json')],
  [1, ['GET', 'HEAD'], fc.constant('/api/locales')],
  [1, ['GET', 'HEAD'], fc.constant('/api/environments')],
  [1, ['GET', 'HEAD'], fc.constant('/api/collections')],
  [1, ['GET', 'HEAD'], collection.map(c => `/api/collections/${c}`)],
  [2, ['GET', 'HEAD'], collection.map(c => `/api/collections/${c}/slug-check`)],
  [3, ['GET', 'HEAD', 'POST'], fc.constant('/api/schemas')],
  [2, ['PUT', 'DELETE'], schemaName.map(n => `/api/schemas/${n}`)],
  [1, ['GET', 'HEAD'], schemaName.map(n => `/api/schemas/${n}/raw`)],
  [8, ['GET', 'POST', 'POST'], collection.map(c => `/api/content/${c}`)],
  [8, ['GET', 'HEAD', 'PUT', 'PATCH', 'PATCH', 'DELETE'], fc.tuple(collection, slug).map(([c, s]) => `/api/content/${c}/${s}`)],
  [2, ['GET', 'HEAD'], fc.tuple(collection, slug).map(([c, s]) => `/api/content/${c}/${s}/referrers`)],
  [4, ['GET', 'POST', 'POST'], fc.constant('/api/assets')],
  [2, ['GET', 'HEAD', 'DELETE'], assetPath.map(p => `/api/assets/${p}`)],
  [1, ['GET', 'HEAD'], assetPath.map(p => `/api/transform/${p}`)],
  [1, ['POST'], fc.constant('/api/transform/cache/invalidate')],
  [1, ['GET', 'HEAD'], fc.constant('/api/webhooks/deliveries')],
  [1, ['POST'], fc.tuple(collection, slug).map(([c, s]) => `/api/content/${c}/${s}/schedule`)],
  [1, ['GET', 'HEAD', 'DELETE'], fc.constantFrom('/api/schedules', '/api/schedules/nope', '/api/schedules/00000000-0000-4000-8000-000000000000')],
  [1, ['GET', 'HEAD'], fc.constantFrom('/docs', '/docs/json', '/docs/yaml', '/docs/static/index.html', '/docs/nope', '/admin', '/admin/', '/admin/nope.js')],
  // Routes that do not exist, and methods no route has.
  [1, ['GET', 'POST', 'OPTIONS', 'TRACE', 'PROPFIND'], fc.array(segment(['api', 'content', 'x']), { minLength: 1, maxLength: 4 }).map(s => `/${s.join('/')}`)]
]

// ---- headers ------------------------------------------------------------------------------

const authHeaders: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ authorization: `Bearer ${ADMIN_KEY}` }) },
  { weight: 1, arbitrary: fc.constant({ authorization: `Bearer ${EDITOR_KEY}` }) },
  { weight: 1, arbitrary: fc.constant({ 'x-api-key': VIEWER_KEY }) },
  { weight: 1, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.constantFrom('Bearer', 'Bearer ', 'Basic YTpi', `bearer ${ADMIN_KEY}`, 'Bearer x', `Bearer ${ADMIN_KEY} extra`).map(v => ({ authorization: v })) }
)

const JSON_TYPES = ['application/json', 'application/merge-patch+json', 'application/json; charset=utf-8']
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...JSON_TYPES) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'multipart/form-data',
      'application/json; charset=latin1', 'application/jsonx', 'garbage', ';;;', 'multipart/form-data; boundary=')
  }
)

const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.record({
  accept: fc.constantFrom('*/*', 'application/json', 'image/avif,image/webp', 'text/html', ''),
  'if-none-match': fc.constantFrom('"0000000000000000"', '*', 'W/"x"', 'garbage', '"' + 'a'.repeat(100) + '"'),
  'if-modified-since': fc.constantFrom('Thu, 01 Jan 1970 00:00:00 GMT', 'yesterday', 'Wed, 31 Dec 2098 00:00:00 GMT'),
  range: fc.constantFrom('bytes=0-3', 'bytes=5-1', 'bytes=-0', 'bytes=999999-', 'bytes=0-1,3-4', 'items=0-1', 'bytes=x'),
  'if-range': fc.constantFrom('"x"', 'Thu, 01 Jan 1970 00:00:00 GMT'),
  origin: fc.constantFrom('http://evil.example', 'null'),
  'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0', '*', 'x')
}, { requiredKeys: [] })

// ---- bodies -------------------------------------------------------------------------------

const jsonValue = fc.jsonValue({ maxDepth: 4 })

/** Junk for any field: text that stresses parsers, or any JSON value. */
const junk = fc.oneof(nastyText, jsonValue)

/** A valid body for a collection, then up to two fields made wrong (or added, or removed). */
function entryOf (valid: fc.Arbitrary<Record<string, unknown>>, fields: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  const mutation = fc.tuple(fc.constantFrom(...fields, '_slug', '_status', '_created_at', 'constructor', 'unknown_field'), fc.option(junk))
  return fc.tuple(valid, fc.array(mutation, { maxLength: 2 })).map(([body, mutations]) => {
    const out: Record<string, unknown> = { ...body }
    for (const [field, value] of mutations) {
      if (value === null) Reflect.deleteProperty(out, field)
      else Object.defineProperty(out, field, { value, enumerable: true, writable: true, configurable: true })
    }
    return out
  })
}

const slugValue = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SLUGS, 'second', 'third', 'Crème Brûlée') },
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9]{1,8}$/) },
  { weight: 1, arbitrary: nastyText }
)

const POST_FIELDS = ['title', 'code', 'kind', 'tags', 'rating', 'price', 'featured', 'published_on', 'email', 'link', 'color', 'body', 'seo', 'blocks', 'author', 'related', 'meta']
const validPost: fc.Arbitrary<Record<string, unknown>> = fc.record({
  _slug: slugValue,
  _status: fc.constantFrom('draft', 'published'),
  title: fc.string({ minLength: 1, maxLength: 20 }),
  code: fc.stringMatching(/^[A-Z0-9-]{1,8}$/),
  kind: fc.constantFrom('news', 'blog'),
  tags: fc.subarray(['a', 'b', 'c']),
  rating: fc.integer({ min: 1, max: 5 }),
  price: fc.double({ noNaN: true, noDefaultInfinity: true }),
  featured: fc.boolean(),
  published_on: fc.constantFrom('2024-02-29', '1999-12-31'),
  email: fc.constantFrom('a@example.com'),
  link: fc.constantFrom('https://example.com/x', '/api/assets/a.txt'),
  color: fc.constantFrom('#ff0000'),
  body: fc.string({ unit: 'grapheme', maxLength: 40 }),
  seo: fc.record({ title: fc.string({ maxLength: 20 }), noindex: fc.boolean() }, { requiredKeys: [] }),
  blocks: fc.array(fc.record({ kind: fc.constantFrom('p', 'h1'), text: fc.string({ maxLength: 10 }) }), { maxLength: 3 }),
  author: fc.constantFrom('ann', { _slug: 'ann' }),
  related: fc.constantFrom(['first'], []),
  meta: jsonValue
}, { requiredKeys: ['_slug', 'title'] })

const validAuthor: fc.Arbitrary<Record<string, unknown>> = fc.record({
  _slug: slugValue,
  name: fc.string({ minLength: 1, maxLength: 20 }),
  handle: fc.stringMatching(/^[a-z0-9]{1,6}$/),
  extra: jsonValue
}, { requiredKeys: ['_slug', 'name'] })

const FIELD_TYPES = ['string', 'text', 'markdown', 'richtext', 'number', 'integer', 'boolean', 'date', 'datetime', 'email', 'url', 'slug', 'color',
  'select', 'multiselect', 'reference', 'asset', 'object', 'array', 'json', 'enum']
const PATTERNS = ['^[a-z]+$', '^(a+)+$', '^(a|a)*$', '(?=a)', '(a)\\1', '[', '\\d{5000}', '[ab]*a[ab]{400}c', '^\\p{L}+$', '']

const fieldDefinition: fc.Arbitrary<unknown> = fc.letrec<{ field: unknown }>(tie => ({
  field: fc.oneof(
    { depthSize: 'small' },
    fc.record({
      field_type: fc.constantFrom(...FIELD_TYPES),
      required: fc.oneof(fc.boolean(), fc.constant('yes')),
      unique: fc.boolean(),
      readonly: fc.boolean(),
      default: jsonValue,
      auto: fc.constantFrom('uuid', 'now', 'x'),
      pattern: fc.constantFrom(...PATTERNS),
      min_length: fc.integer({ min: -1, max: 5 }),
      max_length: fc.integer({ min: 0, max: 5 }),
      min: fc.double(),
      options: fc.oneof(fc.constant(['a', 'b']), fc.constant([]), jsonValue),
      collection: fc.constantFrom(...COLLECTIONS),
      multiple: fc.boolean(),
      accept: fc.constantFrom('image/*', 'images', ['text/plain']),
      fields: fc.dictionary(fc.constantFrom('a', 'b', 'constructor', 'Bad Name', '_x'), tie('field'), { maxKeys: 3 }),
      items: tie('field')
    }, { requiredKeys: ['field_type'] }),
    jsonValue
  )
})).field

const schemaBody: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      name: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('fuzz', 'fuzz_two') }, { weight: 1, arbitrary: fc.constantFrom('posts', 'nope', 'Bad Name', '') }, { weight: 1, arbitrary: jsonValue }),
      extends: fc.oneof(fc.constantFrom('base', 'fuzz', 'ghost', ['base', 'base'], null), jsonValue),
      reusable: fc.boolean(),
      strict: fc.oneof(fc.boolean(), jsonValue),
      default_sort: fc.constantFrom('title', 'nope', '_slug'),
      display_field: fc.constantFrom('title', 'nope'),
      fields: fc.oneof(fc.dictionary(fc.constantFrom('title', 'body', 'toString', 'n', 'bad name', '_x'), fieldDefinition, { maxKeys: 4 }), jsonValue)
    }, { requiredKeys: ['name'] })
  },
  // JSON Schema notation.
  {
    weight: 1,
    arbitrary: fc.record({
      name: fc.constantFrom('fuzz', 'nope'),
      $schema: fc.constant('http://json-schema.org/draft-07/schema#'),
      type: fc.constantFrom('object', 'array'),
      properties: fc.dictionary(fc.constantFrom('title', 'n'), fc.record({ type: fc.constantFrom('string', 'number', 'object', 'bogus'), pattern: fc.constantFrom(...PATTERNS), enum: jsonValue }, { requiredKeys: ['type'] }), { maxKeys: 3 })
    }, { requiredKeys: ['name'] })
  }
)

/** JSON text that is not a valid document, or is one of the wrong kind. */
const rawJsonText = fc.oneof(
  fc.constantFrom('', '{', '{"a":', 'nul', '[]', 'null', '"x"', '0', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}', '\uFEFF{}',
    '{"a":1,"a":2}', '{"_slug":"x"}garbage', '1e999', '{"_slug":"' + 'a'.repeat(300) + '"}'),
  fc.string({ maxLength: 30 })
)

/** A multipart body, possibly truncated or with a boundary its header does not announce. */
const multipartBody: fc.Arbitrary<{ contentType: string, body: string }> = fc.record({
  boundary: fc.constantFrom('fuzzb', 'x'.repeat(70), ''),
  announced: fc.constantFrom('same', 'other', 'none'),
  parts: fc.array(fc.record({
    name: fc.oneof(fc.constantFrom('file', 'folder', 'other', ''), nastyText),
    filename: fc.option(fc.oneof(fc.constantFrom('a.txt', 'img.png', '...', '../x.txt', '', 'a\u0000.txt', 'Crème.PNG'), nastyText)),
    type: fc.option(fc.constantFrom('text/plain', 'image/png', 'garbage')),
    content: fc.oneof(fc.constantFrom('', 'hello', '\u0089PNG\r\n\u001a\n', 'x'.repeat(3000)), nastyText),
    brokenHeader: fc.boolean()
  }), { maxLength: 4 }),
  cut: fc.option(fc.nat())
}).map(({ boundary, announced, parts, cut }) => {
  let body = parts.map(p => {
    const disposition = `Content-Disposition: form-data; name="${p.name}"${p.filename === null ? '' : `; filename="${p.filename}"`}`
    const headers = p.brokenHeader ? 'Garbage without colon' : disposition + (p.type === null ? '' : `\r\nContent-Type: ${p.type}`)
    return `--${boundary}\r\n${headers}\r\n\r\n${p.content}\r\n`
  }).join('') + `--${boundary}--\r\n`
  if (cut !== null) body = body.slice(0, cut % (body.length + 1))
  const contentType = announced === 'none' ? 'multipart/form-data' : `multipart/form-data; boundary=${announced === 'same' ? boundary : 'other'}`
  return { contentType, body }
})

type Body = { contentType: string | null, body: string } | null

/** A schedule's body: an action (or not), and a time from the past to the far future, or any text. */
const scheduleBody = fc.record({
  action: fc.constantFrom('publish', 'unpublish', 'archive'),
  at: fc.oneof(fc.integer({ min: -1e10, max: 1e13 }).map(ms => new Date(Date.now() + ms).toISOString()), nastyText)
}, { requiredKeys: [] })

/** A body suited to the route (most of the time), or any other. */
function bodyFor (path: string, method: string): fc.Arbitrary<Body> {
  const json = (value: fc.Arbitrary<unknown>): fc.Arbitrary<Body> =>
    fc.tuple(value, contentType).map(([v, type]) => ({ contentType: type, body: JSON.stringify(v) ?? 'null' }))
  const raw: fc.Arbitrary<Body> = fc.tuple(rawJsonText, fc.option(contentType)).map(([body, type]) => ({ contentType: type, body }))
  const none: fc.Arbitrary<Body> = fc.constant(null)
  if (method === 'GET' || method === 'HEAD' || method === 'DELETE') return fc.oneof({ weight: 8, arbitrary: none }, { weight: 1, arbitrary: raw })
  let suited: fc.Arbitrary<Body>
  if (path.startsWith('/api/schemas')) suited = json(schemaBody)
  else if (path === '/api/assets') suited = multipartBody
  else if (path.startsWith('/api/transform')) suited = json(fc.record({ path: fc.oneof(fc.constantFrom('/api/assets/a.txt', '/etc/passwd'), nastyText) }, { requiredKeys: [] }))
  else if (path.endsWith('/schedule')) suited = json(scheduleBody)
  else if (path.startsWith('/api/content/posts')) suited = json(entryOf(validPost, POST_FIELDS))
  else if (path.startsWith('/api/content/authors')) suited = json(entryOf(validAuthor, ['name', 'handle']))
  else suited = json(fc.oneof({ weight: 3, arbitrary: entryOf(validPost, POST_FIELDS) }, { weight: 1, arbitrary: jsonValue }))
  return fc.oneof({ weight: 12, arbitrary: suited }, { weight: 1, arbitrary: raw }, { weight: 1, arbitrary: json(jsonValue) }, { weight: 1, arbitrary: none })
}

// ---- requests -----------------------------------------------------------------------------

const template = fc.oneof(...TEMPLATES.map(([weight, methods, path]) => ({ weight, arbitrary: fc.constant({ methods, path }) })))
/** Writes mostly come without a query string (one could hide what the body does). */
const maybeQuery = fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryString })

export const requestArb: fc.Arbitrary<FuzzRequest> = template
  .chain(({ methods, path }) => fc.tuple(fc.constantFrom(...methods), path, maybeQuery))
  .chain(([method, path, query]) => fc.tuple(fc.constant(method), fc.constant(path), fc.constant(query), authHeaders, extraHeaders, bodyFor(path, method)))
  .map(([method, path, query, auth, extra, body]) => {
    const headers: Record<string, string> = { ...auth, ...extra }
    const request: FuzzRequest = { method, url: path + query, headers }
    if (body !== null) {
      if (body.contentType !== null) headers['content-type'] = body.contentType
      request.body = body.body
    }
    return request
  })
