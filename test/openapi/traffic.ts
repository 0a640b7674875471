// A traffic script over every route of the API and the statuses a request valid by the
// document can draw: the proxy test replays it through Prism's validating proxy.
import { ADMIN_KEY, EDITOR_KEY, VIEWER_KEY } from '../helper.js'

export interface Call {
  method: string
  /**
   * Path and query; `{etag:<key>}` is replaced by the ETag recorded under that key, `{cursor}` by
   * the sync cursor recorded, `{ahead}` by a cursor of the server ahead of its change log.
   */
  url: string
  key?: string
  headers?: Record<string, string>
  json?: unknown
  /** A body sent as it is (with its own Content-Type header). */
  raw?: string
  /** A multipart form: field name to a string, or to a file `{ name, bytes, type }`. */
  form?: Record<string, string | { name: string, bytes: Uint8Array, type: string }>
  status: number
  /** Records the answer's ETag under this key. */
  saveEtag?: string
  /** Records the answer's sync `cursor`: `{cursor}` in a later URL stands for it. */
  saveCursor?: boolean
  /** Records the answer's `id` (a schedule's): `{id}` in a later URL stands for it. */
  saveId?: boolean
  /**
   * Sent to the server, not through the proxy: a body the document refuses (the proxy answers it
   * itself), or a binary upload, for a defect of Prism 5.14 that re-encodes a binary multipart part
   * as text (a PNG arrives corrupted). HEAD calls go direct too (see the proxy test).
   */
  direct?: boolean
}

const BAD_KEY = 'not-a-key-0123456789abcdef'
/** The upload limit the proxy test's server runs with (CMS_UPLOAD_LIMIT), small enough to exceed cheaply. */
export const UPLOAD_LIMIT = 65536
const json = (method: string, url: string, body: unknown, status: number, key = EDITOR_KEY): Call => ({ method, url, json: body, status, key })

function discovery (): Call[] {
  return [
    { method: 'GET', url: '/health', status: 200 },
    { method: 'HEAD', url: '/health', status: 200 },
    { method: 'GET', url: '/ready', status: 200 },
    { method: 'HEAD', url: '/ready', status: 200 },
    { method: 'GET', url: '/api/openapi.json', status: 200 },
    { method: 'HEAD', url: '/api/openapi.json', status: 200 },
    { method: 'GET', url: '/api/locales', status: 200 },
    { method: 'HEAD', url: '/api/locales', status: 200 },
    { method: 'GET', url: '/api/environments', status: 200 },
    { method: 'HEAD', url: '/api/environments', status: 200 },
    { method: 'GET', url: '/api/collections', status: 200 },
    { method: 'HEAD', url: '/api/collections', status: 200 },
    { method: 'GET', url: '/api/collections/article', status: 200 },
    { method: 'HEAD', url: '/api/collections/article', status: 200 },
    { method: 'GET', url: '/api/collections/nope', status: 404 },
    { method: 'GET', url: '/api/collections/article/slug-check?slug=Hello%20World', status: 200 },
    { method: 'HEAD', url: '/api/collections/article/slug-check?slug=x', status: 200 }
  ]
}

function schemas (): Call[] {
  const note = { name: 'note', fields: { text: { field_type: 'text' } } }
  return [
    { method: 'GET', url: '/api/schemas', status: 200 },
    { method: 'HEAD', url: '/api/schemas', status: 200 },
    { method: 'GET', url: '/api/schemas/article/raw', status: 200 },
    { method: 'HEAD', url: '/api/schemas/article/raw', status: 200 },
    { method: 'GET', url: '/api/schemas/nope/raw', status: 404 },
    json('POST', '/api/schemas', note, 401, BAD_KEY),
    json('POST', '/api/schemas', note, 403, VIEWER_KEY),
    json('POST', '/api/schemas', note, 201, ADMIN_KEY),
    json('POST', '/api/schemas', note, 409, ADMIN_KEY),
    json('POST', '/api/schemas', { name: 'bad', fields: { x: { field_type: 'nope' } } }, 422, ADMIN_KEY),
    json('PUT', '/api/schemas/note', { ...note, label: 'Note' }, 200, ADMIN_KEY),
    json('PUT', '/api/schemas/missing', { ...note, name: 'missing' }, 404, ADMIN_KEY),
    json('PUT', '/api/schemas/note', note, 403, VIEWER_KEY),
    json('PUT', '/api/schemas/note', note, 401, BAD_KEY),
    json('PUT', '/api/schemas/note', { name: 'note', fields: { x: { field_type: 'nope' } } }, 422, ADMIN_KEY),
    { method: 'DELETE', url: '/api/schemas/note', key: VIEWER_KEY, status: 403 },
    { method: 'DELETE', url: '/api/schemas/note', key: BAD_KEY, status: 401 },
    { method: 'DELETE', url: '/api/schemas/note', key: ADMIN_KEY, status: 204 },
    { method: 'DELETE', url: '/api/schemas/note', key: ADMIN_KEY, status: 404 }
  ]
}

const ARTICLE = {
  _slug: 'first',
  title: 'First',
  kind: 'news',
  tags: ['a', 'b'],
  views: 3,
  rating: 4.5,
  author: 'ada',
  reviewers: ['ada'],
  when: '2024-05-01T09:30Z',
  day: '2024-05-01',
  color: '#ff0000',
  cover: '/api/assets/pics/red.png',
  meta: { summary: 'S', words: 10 },
  links: ['https://example.org/'],
  extra: { any: [1, 'two'] },
  code: 'X1'
}

function writes (): Call[] {
  return [
    json('POST', '/api/content/person', { _slug: 'ada', name: 'Ada' }, 201),
    json('POST', '/api/content/person', { _slug: 'bob', name: 'Bob', _status: 'draft' }, 201),
    json('POST', '/api/content/article', ARTICLE, 201),
    json('POST', '/api/content/article', { _slug: 'second', title: 'Second', kind: 'essay', tags: 'c' }, 201),
    json('POST', '/api/content/article', ARTICLE, 409),
    json('POST', '/api/content/article', { ...ARTICLE, _slug: 'third', author: 'nobody' }, 422),
    json('POST', '/api/content/article', { ...ARTICLE, _slug: 'third' }, 403, VIEWER_KEY),
    json('POST', '/api/content/article', { ...ARTICLE, _slug: 'third' }, 401, BAD_KEY),
    json('POST', '/api/content/nope', { _slug: 'x' }, 404),
    json('PUT', '/api/content/article/first', { ...ARTICLE, title: 'First, again' }, 200),
    json('PUT', '/api/content/article/missing', { ...ARTICLE, _slug: 'missing' }, 404),
    json('PUT', '/api/content/article/first', { ...ARTICLE, code: 'changed' }, 422),
    json('PUT', '/api/content/article/first', ARTICLE, 403, VIEWER_KEY),
    json('PUT', '/api/content/article/first', ARTICLE, 401, BAD_KEY),
    json('PATCH', '/api/content/article/first', { views: 1 }, 403, VIEWER_KEY),
    { method: 'PATCH', url: '/api/content/article/first', key: EDITOR_KEY, headers: { 'content-type': 'application/merge-patch+json' }, json: { views: 4, rating: null }, status: 200 },
    json('PATCH', '/api/content/article/first', { kind: null }, 422),
    json('PATCH', '/api/content/article/missing', { views: 1 }, 404),
    json('PATCH', '/api/content/article/first', { views: 1 }, 401, BAD_KEY)
  ]
}

/** Versions, restore and drafts (contract §13) of 'first', which writes() created, replaced and patched. */
function editorial (): Call[] {
  const versions = '/api/content/article/first/versions'
  const draft = '/api/content/article/first/draft'
  const refused = (headers: Record<string, string>, raw: string, status: number): Call => ({ method: 'PUT', url: draft, key: EDITOR_KEY, headers, raw, status, direct: true })
  return [
    { method: 'GET', url: versions, key: VIEWER_KEY, status: 200 },
    { method: 'HEAD', url: versions, key: VIEWER_KEY, status: 200 },
    { method: 'GET', url: versions, key: BAD_KEY, status: 401 },
    { method: 'GET', url: '/api/content/article/missing/versions', key: VIEWER_KEY, status: 404 },
    { method: 'GET', url: '/api/content/nope/x/versions', key: VIEWER_KEY, status: 404 },
    { method: 'HEAD', url: '/api/content/nope/x/versions', key: VIEWER_KEY, status: 404 },
    { method: 'GET', url: `${versions}/1`, key: VIEWER_KEY, status: 200 },
    { method: 'HEAD', url: `${versions}/1`, key: VIEWER_KEY, status: 200 },
    { method: 'GET', url: `${versions}/1`, key: BAD_KEY, status: 401 },
    { method: 'GET', url: `${versions}/99`, key: VIEWER_KEY, status: 404 },
    { method: 'GET', url: '/api/content/nope/x/versions/1', key: VIEWER_KEY, status: 404 },
    { method: 'HEAD', url: '/api/content/nope/x/versions/1', key: VIEWER_KEY, status: 404 },
    { method: 'POST', url: `${versions}/1/restore`, key: EDITOR_KEY, status: 200 },
    { method: 'POST', url: `${versions}/1/restore`, key: BAD_KEY, status: 401 },
    { method: 'POST', url: `${versions}/1/restore`, key: VIEWER_KEY, status: 403 },
    { method: 'POST', url: `${versions}/99/restore`, key: EDITOR_KEY, status: 404 },
    { method: 'POST', url: '/api/content/nope/x/versions/1/restore', key: EDITOR_KEY, status: 404 },
    // A version whose readonly `code` differs from the re-created entry's: 422.
    json('POST', '/api/content/article', { _slug: 'fourth', title: 'Fourth', kind: 'news', code: 'A' }, 201),
    { method: 'DELETE', url: '/api/content/article/fourth', key: EDITOR_KEY, status: 204 },
    json('POST', '/api/content/article', { _slug: 'fourth', title: 'Fourth', kind: 'news', code: 'B' }, 201),
    { method: 'POST', url: '/api/content/article/fourth/versions/1/restore', key: EDITOR_KEY, status: 422 },
    { method: 'DELETE', url: '/api/content/article/fourth', key: EDITOR_KEY, status: 204 },

    json('POST', '/api/content/person', { _slug: 'cy', name: 'Cy' }, 201),
    json('PUT', draft, { ...ARTICLE, title: 'First, next', author: 'cy' }, 200),
    json('PUT', draft, ARTICLE, 401, BAD_KEY),
    json('PUT', draft, ARTICLE, 403, VIEWER_KEY),
    json('PUT', draft, { ...ARTICLE, code: 'changed' }, 422),
    json('PUT', '/api/content/article/missing/draft', ARTICLE, 404),
    json('PUT', '/api/content/nope/x/draft', { a: 1 }, 404),
    json('POST', '/api/content/article', { _slug: 'drafty', title: 'Drafty', kind: 'news', _status: 'draft' }, 201),
    json('PUT', '/api/content/article/drafty/draft', { title: 'D', kind: 'news' }, 409),
    refused({ 'content-type': 'text/plain' }, 'hello', 415),
    refused({ 'content-type': 'application/json' }, JSON.stringify({ title: 'x'.repeat(1_100_000), kind: 'news' }), 413),
    { method: 'GET', url: draft, key: VIEWER_KEY, status: 200 },
    { method: 'HEAD', url: draft, key: VIEWER_KEY, status: 200 },
    { method: 'GET', url: draft, key: BAD_KEY, status: 401 },
    { method: 'GET', url: '/api/content/article/drafty/draft', key: VIEWER_KEY, status: 404 },
    { method: 'GET', url: '/api/content/nope/x/draft', key: VIEWER_KEY, status: 404 },
    { method: 'HEAD', url: '/api/content/nope/x/draft', key: VIEWER_KEY, status: 404 },
    // The person the draft names is deleted: its publish is a 422, and the draft stays.
    { method: 'DELETE', url: '/api/content/person/cy', key: EDITOR_KEY, status: 204 },
    { method: 'POST', url: `${draft}/publish`, key: EDITOR_KEY, status: 422 },
    { method: 'POST', url: `${draft}/publish`, key: BAD_KEY, status: 401 },
    { method: 'POST', url: `${draft}/publish`, key: VIEWER_KEY, status: 403 },
    json('PUT', draft, { ...ARTICLE, title: 'First, next' }, 200),
    { method: 'POST', url: `${draft}/publish`, key: EDITOR_KEY, status: 200 },
    { method: 'POST', url: `${draft}/publish`, key: EDITOR_KEY, status: 404 },
    { method: 'POST', url: '/api/content/nope/x/draft/publish', key: EDITOR_KEY, status: 404 },
    json('PUT', draft, ARTICLE, 200),
    { method: 'DELETE', url: draft, key: BAD_KEY, status: 401 },
    { method: 'DELETE', url: draft, key: VIEWER_KEY, status: 403 },
    { method: 'DELETE', url: draft, key: EDITOR_KEY, status: 204 },
    { method: 'DELETE', url: draft, key: EDITOR_KEY, status: 404 },
    { method: 'DELETE', url: '/api/content/nope/x/draft', key: EDITOR_KEY, status: 404 },
    { method: 'DELETE', url: '/api/content/article/drafty', key: EDITOR_KEY, status: 204 }
  ]
}

function reads (): Call[] {
  return [
    { method: 'GET', url: '/api/content/article', status: 200, saveEtag: 'list' },
    { method: 'GET', url: '/api/content/article', headers: { 'if-none-match': '{etag:list}' }, status: 304 },
    { method: 'HEAD', url: '/api/content/article', status: 200 },
    { method: 'GET', url: '/api/content/article?_resolve=1&_sort=-title', status: 200 },
    { method: 'GET', url: '/api/content/article?_fields=title', status: 200 },
    { method: 'GET', url: '/api/content/article?_page=abc', status: 400 },
    { method: 'GET', url: '/api/content/person?_status=all', key: VIEWER_KEY, status: 200 },
    { method: 'GET', url: '/api/content/nope', status: 404 },
    { method: 'HEAD', url: '/api/content/nope', status: 404 },
    { method: 'GET', url: '/api/content/nope/x', status: 404 },
    { method: 'HEAD', url: '/api/content/nope/x', status: 404 },
    json('PUT', '/api/content/nope/x', { _slug: 'x' }, 404),
    json('PATCH', '/api/content/nope/x', { a: 1 }, 404),
    { method: 'DELETE', url: '/api/content/nope/x', key: EDITOR_KEY, status: 404 },
    { method: 'GET', url: '/api/content/article/first', status: 200, saveEtag: 'entry' },
    { method: 'GET', url: '/api/content/article/first', headers: { 'if-none-match': '{etag:entry}' }, status: 304 },
    { method: 'HEAD', url: '/api/content/article/first', status: 200 },
    { method: 'GET', url: '/api/content/article/first?_resolve=2', status: 200 },
    { method: 'GET', url: '/api/content/article/missing', status: 404 },
    { method: 'GET', url: '/api/content/person/ada/referrers', status: 200 },
    { method: 'HEAD', url: '/api/content/person/ada/referrers', status: 200 },
    { method: 'GET', url: '/api/content/nope/x/referrers', status: 404 },
    { method: 'DELETE', url: '/api/content/article/second', key: VIEWER_KEY, status: 403 },
    { method: 'DELETE', url: '/api/content/article/second', key: BAD_KEY, status: 401 },
    { method: 'DELETE', url: '/api/content/article/second', key: EDITOR_KEY, status: 204 },
    { method: 'DELETE', url: '/api/content/article/second', key: EDITOR_KEY, status: 404 }
  ]
}

function assets (png: Uint8Array): Call[] {
  const file = { name: 'red.png', bytes: png, type: 'image/png' }
  const text = { name: 'notes.txt', bytes: new TextEncoder().encode('plain text'), type: 'text/plain' }
  return [
    { method: 'POST', url: '/api/assets', key: EDITOR_KEY, form: { folder: 'pics', file }, status: 201, direct: true },
    { method: 'POST', url: '/api/assets', key: EDITOR_KEY, form: { folder: 'pics', file: text }, status: 201 },
    { method: 'POST', url: '/api/assets', key: EDITOR_KEY, form: { folder: 'pics', file: text }, status: 201 },
    { method: 'POST', url: '/api/assets', key: VIEWER_KEY, form: { file }, status: 403 },
    { method: 'POST', url: '/api/assets', key: BAD_KEY, form: { file }, status: 401 },
    { method: 'GET', url: '/api/assets', status: 200 },
    { method: 'HEAD', url: '/api/assets', status: 200 },
    { method: 'GET', url: '/api/assets?_page=0', status: 400 },
    { method: 'GET', url: '/api/assets/pics%2Fred.png', status: 200, saveEtag: 'asset' },
    { method: 'HEAD', url: '/api/assets/pics%2Fred.png', status: 200 },
    { method: 'GET', url: '/api/assets/pics%2Fred.png', headers: { range: 'bytes=0-9' }, status: 206 },
    { method: 'GET', url: '/api/assets/pics%2Fred.png', headers: { range: 'bytes=99999-' }, status: 416 },
    { method: 'GET', url: '/api/assets/pics%2Fred.png', headers: { 'if-none-match': '{etag:asset}' }, status: 304 },
    { method: 'GET', url: '/api/assets/pics%2Fred.png', headers: { 'if-match': '"nope"' }, status: 412 },
    { method: 'GET', url: '/api/assets/pics%2Fmissing.png', status: 404 },
    { method: 'GET', url: '/api/transform/pics%2Fred.png?w=2&format=webp', status: 200, saveEtag: 'variant' },
    { method: 'HEAD', url: '/api/transform/pics%2Fred.png?w=2&format=webp', status: 200 },
    { method: 'GET', url: '/api/transform/pics%2Fred.png?w=2&format=webp', headers: { 'if-none-match': '{etag:variant}' }, status: 304 },
    { method: 'GET', url: '/api/transform/pics%2Fred.png?w=2&format=auto', headers: { accept: 'image/avif,image/webp' }, status: 200 },
    { method: 'GET', url: '/api/transform/pics%2Fnotes.txt?w=2', status: 415 },
    { method: 'GET', url: '/api/transform/pics%2Fmissing.png?w=2', status: 404 },
    json('POST', '/api/transform/cache/invalidate', { path: '/api/assets/pics/red.png' }, 200),
    json('POST', '/api/transform/cache/invalidate', {}, 200),
    json('POST', '/api/transform/cache/invalidate', {}, 403, VIEWER_KEY),
    json('POST', '/api/transform/cache/invalidate', {}, 401, BAD_KEY),
    { method: 'DELETE', url: '/api/assets/pics%2Fnotes-1.txt', key: VIEWER_KEY, status: 403 },
    { method: 'DELETE', url: '/api/assets/pics%2Fnotes-1.txt', key: BAD_KEY, status: 401 },
    { method: 'DELETE', url: '/api/assets/pics%2Fnotes-1.txt', key: EDITOR_KEY, status: 204 },
    { method: 'DELETE', url: '/api/assets/pics%2Fnotes-1.txt', key: EDITOR_KEY, status: 404 }
  ]
}

function webhooks (): Call[] {
  return [
    { method: 'GET', url: '/api/webhooks/deliveries', key: ADMIN_KEY, status: 200 },
    { method: 'HEAD', url: '/api/webhooks/deliveries', key: ADMIN_KEY, status: 200 },
    { method: 'GET', url: '/api/webhooks/deliveries?_page=0', key: ADMIN_KEY, status: 400 },
    { method: 'GET', url: '/api/webhooks/deliveries', key: EDITOR_KEY, status: 403 },
    { method: 'GET', url: '/api/webhooks/deliveries', key: BAD_KEY, status: 401 }
  ]
}

function sync (): Call[] {
  return [
    { method: 'GET', url: '/api/sync?initial=true&_per_page=2', key: ADMIN_KEY, status: 200, saveCursor: true },
    { method: 'HEAD', url: '/api/sync?initial=true', status: 200 },
    { method: 'GET', url: '/api/sync?cursor={cursor}', key: ADMIN_KEY, status: 200 },
    { method: 'GET', url: '/api/sync?initial=true&_status=published&collections=person', status: 200 },
    { method: 'GET', url: '/api/sync?cursor=not-a-cursor', status: 400 },
    // A cursor of this server ahead of its log (the log restored from an older backup): 410.
    { method: 'GET', url: '/api/sync?cursor={ahead}', key: ADMIN_KEY, status: 410 },
    { method: 'GET', url: '/api/sync', status: 400 }
  ]
}

function schedules (): Call[] {
  const at = '2099-01-01T00:00:00Z'
  return [
    { ...json('POST', '/api/content/article/first/schedule', { action: 'unpublish', at }, 201), saveId: true },
    json('POST', '/api/content/article/first/schedule', { action: 'publish', at: '2000-01-01T00:00:00Z' }, 422),
    json('POST', '/api/content/article/first/schedule', { action: 'publish', at }, 403, VIEWER_KEY),
    json('POST', '/api/content/article/first/schedule', { action: 'publish', at }, 401, BAD_KEY),
    json('POST', '/api/content/nope/x/schedule', { action: 'publish', at }, 404),
    json('POST', '/api/content/article/nobody/schedule', { action: 'publish', at }, 404),
    { method: 'GET', url: '/api/schedules', key: VIEWER_KEY, status: 200 },
    { method: 'HEAD', url: '/api/schedules', key: VIEWER_KEY, status: 200 },
    { method: 'GET', url: '/api/schedules?status=failed&_environment=default', key: EDITOR_KEY, status: 200 },
    { method: 'GET', url: '/api/schedules?_page=0', key: EDITOR_KEY, status: 400 },
    { method: 'GET', url: '/api/schedules?collection=article&slug=first&_environment=default', key: VIEWER_KEY, status: 200 },
    { method: 'GET', url: '/api/schedules?slug=first', key: VIEWER_KEY, status: 400 },
    { method: 'GET', url: '/api/schedules?collection=nope', key: VIEWER_KEY, status: 404 },
    { method: 'GET', url: '/api/schedules', key: BAD_KEY, status: 401 },
    { method: 'DELETE', url: '/api/schedules/{id}', key: VIEWER_KEY, status: 403 },
    { method: 'DELETE', url: '/api/schedules/{id}', key: BAD_KEY, status: 401 },
    { method: 'DELETE', url: '/api/schedules/{id}', key: EDITOR_KEY, status: 204 },
    { method: 'DELETE', url: '/api/schedules/{id}', key: EDITOR_KEY, status: 404 }
  ]
}

/**
 * Bodies the document refuses (a type no operation takes, bad JSON, over the limit): a validating
 * proxy answers them itself, so they go to the server, whose answers must still be declared.
 */
function refusedBodies (): Call[] {
  const big = { name: 'big.txt', bytes: new Uint8Array(UPLOAD_LIMIT + 1), type: 'text/plain' }
  const text = { 'content-type': 'text/plain' }
  const badJson = { 'content-type': 'application/json' }
  const huge = JSON.stringify({ _slug: 'big', title: 'x'.repeat(1_100_000), kind: 'news' })
  return [
    { method: 'POST', url: '/api/content/article', key: EDITOR_KEY, headers: text, raw: 'hello', status: 415, direct: true },
    { method: 'POST', url: '/api/content/article', key: EDITOR_KEY, headers: badJson, raw: '{"_slug":', status: 400, direct: true },
    { method: 'POST', url: '/api/content/article', key: EDITOR_KEY, headers: badJson, raw: huge, status: 413, direct: true },
    { method: 'PUT', url: '/api/content/article/first', key: EDITOR_KEY, headers: text, raw: 'hello', status: 415, direct: true },
    { method: 'PUT', url: '/api/content/article/first', key: EDITOR_KEY, headers: badJson, raw: huge, status: 413, direct: true },
    { method: 'POST', url: '/api/content/article/first/schedule', key: EDITOR_KEY, headers: text, raw: 'hello', status: 415, direct: true },
    { method: 'POST', url: '/api/content/article/first/schedule', key: EDITOR_KEY, headers: badJson, raw: huge, status: 413, direct: true },
    { method: 'PATCH', url: '/api/content/article/first', key: EDITOR_KEY, headers: text, raw: 'hello', status: 415, direct: true },
    { method: 'PATCH', url: '/api/content/article/first', key: EDITOR_KEY, headers: badJson, raw: huge, status: 413, direct: true },
    { method: 'POST', url: '/api/schemas', key: ADMIN_KEY, headers: badJson, raw: huge, status: 413, direct: true },
    { method: 'PUT', url: '/api/schemas/person', key: ADMIN_KEY, headers: text, raw: 'hello', status: 415, direct: true },
    { method: 'POST', url: '/api/assets', key: EDITOR_KEY, form: { file: big }, status: 413, direct: true },
    { method: 'PATCH', url: '/api/content/article/first', key: EDITOR_KEY, headers: badJson, raw: '[', status: 400, direct: true },
    { method: 'POST', url: '/api/schemas', key: ADMIN_KEY, headers: text, raw: 'hello', status: 415, direct: true },
    { method: 'PUT', url: '/api/schemas/person', key: ADMIN_KEY, headers: badJson, raw: huge, status: 413, direct: true },
    { method: 'POST', url: '/api/transform/cache/invalidate', key: EDITOR_KEY, headers: text, raw: 'hello', status: 415, direct: true },
    { method: 'POST', url: '/api/transform/cache/invalidate', key: EDITOR_KEY, headers: badJson, raw: huge, status: 413, direct: true },
    { method: 'POST', url: '/api/assets', key: EDITOR_KEY, headers: badJson, raw: '{}', status: 415, direct: true }
  ]
}

/** Admin sessions (routes/api/session); sign out everywhere last, as it ends every session. */
function session (): Call[] {
  return [
    { method: 'POST', url: '/api/session', json: { key: EDITOR_KEY }, status: 200 },
    { method: 'POST', url: '/api/session', json: { key: BAD_KEY }, status: 401 },
    { method: 'POST', url: '/api/session', json: {}, status: 400, direct: true },
    { method: 'POST', url: '/api/session', headers: { 'content-type': 'text/plain' }, raw: 'hello', status: 415, direct: true },
    { method: 'POST', url: '/api/session', headers: { 'content-type': 'application/json' }, raw: JSON.stringify({ key: 'x'.repeat(1_100_000) }), status: 413, direct: true },
    { method: 'GET', url: '/api/session', key: VIEWER_KEY, status: 200 },
    { method: 'HEAD', url: '/api/session', status: 200 },
    { method: 'DELETE', url: '/api/session', status: 204 },
    { method: 'POST', url: '/api/session/revoke', key: BAD_KEY, status: 401 },
    { method: 'POST', url: '/api/session/revoke', key: EDITOR_KEY, status: 403 },
    { method: 'POST', url: '/api/session/revoke', key: ADMIN_KEY, status: 204 }
  ]
}

/** The whole script, in order (later calls read what earlier ones wrote). */
export function trafficScript (png: Uint8Array): Call[] {
  return [...discovery(), ...schemas(), ...writes(), ...editorial(), ...reads(), ...assets(png), ...webhooks(), ...sync(), ...schedules(), ...session(), ...refusedBodies()]
}
