// The response headers each operation can send (contract §15), declared from what the
// operation's responses are: one rule per header, in one place, rather than in every route.
type Json = Record<string, unknown>

export interface HeaderOptions {
  /** Whether CORS is on (CMS_CORS_ORIGINS): its headers then go with any answer to a cross-origin request. */
  cors: boolean
}

const header = (description: string, required = false): Json =>
  ({ description, schema: { type: 'string' }, ...(required ? { required: true } : {}) })

const VARY = header('Accept-Encoding on answers that may be compressed; Origin with CORS; Accept on a transform with format=auto')
const ENCODING = header('br or gzip, for answers of 1 KB or more when Accept-Encoding allows')
const ETAG = header('The entity tag; If-None-Match with it gives 304')
const CACHE_CONTROL = header('How long the answer may be reused')
const CONTENT_RANGE = header('The range sent (206), or `bytes */<size>` (416)')
const FILE_HEADERS: Json = {
  'Last-Modified': header('When the file last changed'),
  'Accept-Ranges': header('`bytes`: a Range request is answered with 206')
}
const SERVED_FILE_HEADERS: Json = {
  'X-Content-Type-Options': header('nosniff'),
  'Content-Security-Policy': header('For active content types (HTML, SVG, XML): sandboxed')
}
const CORS_HEADERS: Json = {
  'Access-Control-Allow-Origin': header('The allowed origin, with CORS on'),
  'Access-Control-Expose-Headers': header('ETag, with CORS on')
}

interface Operation { responses?: Record<string, Json> }

/** Whether a response carries a file (any content type but JSON). */
function servesFile (response: Json): boolean {
  const content = response.content as Json | undefined
  return content !== undefined && Object.keys(content).some(type => type !== 'application/json')
}

/** The headers of one response of an operation whose statuses are `statuses`. */
export function responseHeaders (status: string, response: Json, statuses: ReadonlySet<string>, options: HeaderOptions): Json {
  const out: Json = { Vary: VARY }
  const hasBody = response.content !== undefined
  if (hasBody && status !== '206') out['Content-Encoding'] = ENCODING
  if (status === '401') out['WWW-Authenticate'] = header('`Bearer`: the API key scheme', true)
  const cacheable = statuses.has('304') && (status === '200' || status === '206' || status === '304')
  if (cacheable) Object.assign(out, { ETag: ETAG, 'Cache-Control': CACHE_CONTROL })
  const ranged = statuses.has('206')
  if (ranged && (status === '200' || status === '206' || status === '304')) Object.assign(out, FILE_HEADERS)
  if (status === '206' || (ranged && status === '416')) out['Content-Range'] = CONTENT_RANGE
  // A file's 304 keeps the headers its 200 set before the match was known.
  if (servesFile(response) || (ranged && status === '304')) Object.assign(out, SERVED_FILE_HEADERS)
  if (options.cors) Object.assign(out, CORS_HEADERS)
  return out
}

/** Declares the headers of every response of `operation`, keeping any it declares itself. */
export function declareHeaders (operation: Operation, options: HeaderOptions): void {
  const responses = operation.responses ?? {}
  const statuses = new Set(Object.keys(responses))
  for (const [status, response] of Object.entries(responses)) {
    response.headers = { ...responseHeaders(status, response, statuses, options), ...response.headers as Json | undefined }
  }
}
