// The one way the admin talks to the server: the public HTTP API, with the session's key.
import type { Asset } from './types.js'

/** The contract's error envelope (§2), or what we make of a non-JSON failure. */
export class ApiError extends Error {
  constructor (
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: string[] = []
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export type Query = Record<string, string | number | boolean | null | undefined>

let csrfToken: string | null = null
let onUnauthorized: (() => void) | null = null

/** The session's CSRF token (session.ts): the session cookie counts for a write only beside it. */
export function setCsrfToken (token: string | null): void {
  csrfToken = token
}

/** Called when a request of a signed-in session answers 401: it expired, or was signed out (maybe everywhere). */
export function setUnauthorizedHandler (handler: (() => void) | null): void {
  onUnauthorized = handler
}

function authHeaders (): Record<string, string> {
  return csrfToken === null ? {} : { 'x-csrf-token': csrfToken }
}

export function withQuery (path: string, query: Query = {}): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue
    params.append(name, String(value))
  }
  const qs = params.toString()
  return qs === '' ? path : `${path}?${qs}`
}

/** One path segment, escaped (names and slugs are already safe; this keeps it so). */
export const seg = (value: string): string => encodeURIComponent(value)

interface RequestOptions {
  query?: Query
  body?: unknown
  form?: FormData
  signal?: AbortSignal
}

async function errorFrom (res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '')
  try {
    const body = JSON.parse(text) as { code?: unknown, message?: unknown, errors?: unknown }
    return new ApiError(
      res.status,
      typeof body.code === 'string' ? body.code : `HTTP_${res.status}`,
      typeof body.message === 'string' ? body.message : res.statusText,
      Array.isArray(body.errors) ? body.errors.map(String) : []
    )
  } catch {
    return new ApiError(res.status, `HTTP_${res.status}`, res.statusText !== '' ? res.statusText : `HTTP ${res.status}`)
  }
}

async function send (method: string, path: string, options: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...authHeaders() }
  let body: BodyInit | undefined
  if (options.form !== undefined) {
    body = options.form
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(options.body)
  }
  let res: Response
  try {
    // no-store: answers differ by session (drafts) and must be fresh right after a write.
    // same-origin credentials: the session cookie goes with every request, to this server only.
    res = await fetch(withQuery(path, options.query), { method, headers, body, signal: options.signal, cache: 'no-store', credentials: 'same-origin' })
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err
    throw new ApiError(0, 'NETWORK', 'The server cannot be reached. Check that it is running.')
  }
  if (!res.ok) {
    const error = await errorFrom(res)
    if (res.status === 401 && csrfToken !== null) onUnauthorized?.()
    throw error
  }
  return res
}

async function bodyOf<T> (res: Response): Promise<T> {
  if (res.status === 204) return undefined as T
  const text = await res.text()
  return (text === '' ? undefined : JSON.parse(text)) as T
}

export async function request<T> (method: string, path: string, options: RequestOptions = {}): Promise<T> {
  return await bodyOf<T>(await send(method, path, options))
}

/** A GET whose answer counts its records in `X-Total-Count` (the referrers' pages). */
export async function getCounted<T> (path: string, query?: Query, signal?: AbortSignal): Promise<{ body: T, total: number | null }> {
  const res = await send('GET', path, { query, signal })
  const total = Number.parseInt(res.headers.get('x-total-count') ?? '', 10)
  return { body: await bodyOf<T>(res), total: Number.isNaN(total) ? null : total }
}

export const api = {
  get: async <T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> => await request<T>('GET', path, { query, signal }),
  post: async <T>(path: string, body: unknown, query?: Query): Promise<T> => await request<T>('POST', path, { body, query }),
  put: async <T>(path: string, body: unknown, query?: Query): Promise<T> => await request<T>('PUT', path, { body, query }),
  /** A JSON merge patch (contract §4 PATCH). */
  patch: async <T>(path: string, body: unknown, query?: Query): Promise<T> => await request<T>('PATCH', path, { body, query }),
  delete: async (path: string, query?: Query): Promise<void> => { await request<undefined>('DELETE', path, { query }) },
  upload: async (files: File[], folder: string, query?: Query): Promise<Asset[]> => {
    const form = new FormData()
    // Fields before files: a streaming parser sees the folder before the first file part.
    if (folder !== '') form.append('folder', folder)
    for (const file of files) form.append('file', file, file.name)
    const reply = await request<{ items: Asset[] }>('POST', '/api/assets', { form, query })
    return reply.items
  }
}

/** A human sentence for any failure. */
export function describeError (err: unknown): string {
  if (err instanceof ApiError) return err.message
  if (err instanceof Error) return err.message
  return String(err)
}

export const isNotFound = (err: unknown): boolean => err instanceof ApiError && err.status === 404

/** The stored form of an asset in an entry: a relative `/api/assets/...` path (interface.md). */
export function assetRef (asset: Asset): string {
  const prefix = '/api/assets/'
  if (asset.path.startsWith(prefix)) return asset.path
  try {
    const url = new URL(asset.url, location.origin)
    if (url.pathname.startsWith(prefix)) return url.pathname
  } catch { /* not a URL: fall through to the path */ }
  return prefix + asset.path.replace(/^\/+/, '').split('/').map(seg).join('/')
}

/** The part of an asset reference after `/api/assets/`, whether relative or absolute; null if not an asset. */
export function assetPathOf (value: string): string | null {
  const prefix = '/api/assets/'
  let pathname = value
  try {
    pathname = new URL(value, location.origin).pathname
  } catch {
    return null
  }
  return pathname.startsWith(prefix) ? pathname.slice(prefix.length) : null
}

const IMAGE_EXT = /\.(png|jpe?g|gif|webp|avif|tiff?)$/i

/** A thumbnail URL through /api/transform, or null when the asset is not a raster image. */
export function thumbnailUrl (value: string, size: number, environment: string | null, mime?: string): string | null {
  const path = assetPathOf(value)
  if (path === null) return null
  const image = mime !== undefined ? mime.startsWith('image/') && mime !== 'image/svg+xml' : IMAGE_EXT.test(path)
  if (!image) return null
  return withQuery(`/api/transform/${path}`, { w: size, h: size, fit: 'cover', format: 'webp', _environment: environment })
}

/** The URL that serves an asset's original file in the current environment. */
export function assetUrl (value: string, environment: string | null): string {
  const path = assetPathOf(value)
  return path === null ? value : withQuery(`/api/assets/${path}`, { _environment: environment })
}
