// Settings (contract §1). Parsed once from an environment-like record and validated;
// a bad value throws a ConfigError whose message is one line naming the setting.
import path from 'node:path'

export type Role = 'admin' | 'editor' | 'viewer'
export const ROLES: readonly Role[] = ['admin', 'editor', 'viewer']
export type StoreKind = 'sqlite' | 'file' | 'postgres'
/** CMS_REVISIONS's default: versions kept per entry (contract §13). */
export const DEFAULT_REVISIONS = 50
export const STORE_KINDS: readonly StoreKind[] = ['sqlite', 'file', 'postgres']
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface ApiKey {
  key: string
  role: Role
}

export interface Config {
  port: number
  host: string
  dataDir: string
  typesDir: string
  assetsDir: string
  store: StoreKind
  /** CMS_DATABASE_URL: the PostgreSQL database (contract §12); set exactly when the store is postgres. */
  databaseUrl: string | null
  /** CMS_DATABASE_POOL: query connections per process with the PostgreSQL store, besides its listening one. */
  databasePool: number
  publicUrl: string
  apiKeys: ApiKey[]
  locales: string[]
  environments: string[]
  webhooks: string[]
  webhookSecret: string | null
  /** Base delay of the webhook retry back-off, in milliseconds. */
  webhookBackoffMs: number
  cacheMax: number
  /** Bytes of cached answers, with their compressed copies (CMS_CACHE_MAX_BYTES); 0 turns the cache off. */
  cacheMaxBytes: number
  /** Bytes of JSON texts kept per stored entry, plain and resolved, together (CMS_TEXT_CACHE_BYTES); 0 keeps none. */
  textCacheBytes: number
  /** Bytes of parsed entries in each of the SQLite store's two entry caches (CMS_ENTRY_CACHE_BYTES); 0 keeps none. */
  entryCacheBytes: number
  /** Bytes of free memory kept for reuse by large bodies that are sent and not kept (CMS_BODY_POOL_BYTES); 0 keeps none. */
  bodyPoolBytes: number
  /** CMS_SYNC_RETENTION_DAYS: days the change log keeps tombstones (contract §9). */
  syncRetentionDays: number
  /** CMS_REVISIONS: versions kept per entry (contract §13); 0 keeps none. */
  revisions: number
  bodyLimit: number
  uploadLimit: number
  trustProxy: boolean
  corsOrigins: string[]
  logLevel: LogLevel
  seed: boolean
  /** Responses compressed when the client accepts it (contract §11); off for a proxy that compresses. */
  compression: boolean
  /** CMS_SESSION_HOURS: how long an admin session cookie lasts (routes/api/session). */
  sessionHours: number
  /** CMS_PREVIEW_URL: the site's preview page, with `{collection}`, `{slug}`, `{locale}`, `{environment}`; null: no preview link. */
  previewUrl: string | null
}

export class ConfigError extends Error {
  constructor (readonly setting: string, problem: string) {
    super(`${setting}: ${problem}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

/**
 * CMS_CACHE_MAX_BYTES: the response cache's bodies and their compressed copies. 128 MiB holds
 * every page of 1,000 of a 100,000-entry collection, plain and resolved (about 55 MB of JSON
 * for the bench's entries), or 10,000 answers of 13 KB. Buffers outside the heap: they cost
 * their size, no more.
 */
export const DEFAULT_CACHE_MAX_BYTES = 128 * 1024 * 1024
/**
 * CMS_TEXT_CACHE_BYTES: 8 MiB holds about 20,000 texts of 100-byte entries (each is counted with
 * the 260 bytes of records that keep it) or 1,500 of 5 KB ones: the entries a site reads again
 * and again (a text is kept from its second making, so a full pull keeps none). What is kept
 * costs more than its size: between full collections the heap runs to about 3.5 times what is
 * live (measured during a 100,000-entry pull), so each MiB kept can cost 3.5 MiB of RSS at peak.
 */
export const DEFAULT_TEXT_CACHE_BYTES = 8 * 1024 * 1024
/**
 * CMS_ENTRY_CACHE_BYTES: 8 MiB holds the 20,000 of the bench's entries (about 150 characters of
 * data), and 1,500 of 5 KB, in each of SQLite's two entry caches. Heap, like kept texts: a MiB
 * kept can cost several of RSS at the peak, and an entry pushed out has lived long enough to be
 * collected only by a full collection.
 */
export const DEFAULT_ENTRY_CACHE_BYTES = 8 * 1024 * 1024
/**
 * CMS_BODY_POOL_BYTES: two free buffers of 8 MiB (for pages of 1,000 entries of 5 KB), or more
 * smaller ones (at most four of a size). Memory outside the heap: it costs its size, no more.
 */
export const DEFAULT_BODY_POOL_BYTES = 16 * 1024 * 1024

const MIN_KEY_LENGTH = 16
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]*$/

function read (env: Env, name: string): string | undefined {
  const value = env[name]
  if (value === undefined) return undefined
  const trimmed = value.trim()
  return trimmed === '' ? undefined : trimmed
}

function list (env: Env, name: string): string[] {
  const value = read(env, name)
  if (value === undefined) return []
  return value.split(',').map(s => s.trim()).filter(s => s !== '')
}

function integer (env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = read(env, name)
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value)) throw new ConfigError(name, `must be a whole number, got '${value}'`)
  const n = Number(value)
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`)
  return n
}

function boolean (env: Env, name: string, fallback: boolean): boolean {
  const value = read(env, name)
  if (value === undefined) return fallback
  const v = value.toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(v)) return true
  if (['0', 'false', 'no', 'off'].includes(v)) return false
  throw new ConfigError(name, `must be true or false, got '${value}'`)
}

/** CMS_PREVIEW_URL: an http(s) URL once its placeholders are filled. */
function previewUrl (env: Env): string | null {
  const value = read(env, 'CMS_PREVIEW_URL')
  if (value === undefined) return null
  httpUrl('CMS_PREVIEW_URL', value.replace(/\{(collection|slug|locale|environment)\}/g, 'x'))
  return value
}

function httpUrl (name: string, value: string): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError(name, `is not a valid URL: '${value}'`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must be an http or https URL, got '${value}'`)
  }
  return value
}

/**
 * CMS_DATABASE_URL, required with CMS_STORE=postgres. The value is never quoted in the message:
 * it carries the database password, and the message goes to the log.
 */
function databaseUrl (env: Env, store: StoreKind): string | null {
  if (store !== 'postgres') return null
  const value = read(env, 'CMS_DATABASE_URL')
  const form = 'expected postgres://user:password@host:port/database'
  if (value === undefined) throw new ConfigError('CMS_DATABASE_URL', `is required with CMS_STORE=postgres (${form})`)
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError('CMS_DATABASE_URL', `is not a valid URL (${form})`)
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError('CMS_DATABASE_URL', `must be a postgres:// or postgresql:// URL (${form})`)
  }
  return value
}

function uniqueNames (name: string, values: string[], what: string): string[] {
  const seen = new Set<string>()
  for (const v of values) {
    if (!NAME_RE.test(v)) throw new ConfigError(name, `'${v}' is not a valid ${what} (letters, digits, '-' and '_')`)
    if (seen.has(v)) throw new ConfigError(name, `duplicate ${what} '${v}'`)
    seen.add(v)
  }
  return values
}

function apiKeys (env: Env): ApiKey[] {
  const keys: ApiKey[] = []
  const single = read(env, 'CMS_API_KEY')
  if (single !== undefined) {
    if (single.length < MIN_KEY_LENGTH) throw new ConfigError('CMS_API_KEY', `a key must be at least ${MIN_KEY_LENGTH} characters`)
    keys.push({ key: single, role: 'admin' })
  }
  for (const pair of list(env, 'CMS_API_KEYS')) {
    const at = pair.lastIndexOf(':')
    if (at <= 0) throw new ConfigError('CMS_API_KEYS', 'each entry must be key:role')
    const key = pair.slice(0, at).trim()
    const role = pair.slice(at + 1).trim()
    // Never echo the key itself: the message may reach a log.
    if (!(ROLES as readonly string[]).includes(role)) {
      throw new ConfigError('CMS_API_KEYS', `unknown role '${role}' (expected admin, editor or viewer)`)
    }
    if (key.length < MIN_KEY_LENGTH) throw new ConfigError('CMS_API_KEYS', `a key must be at least ${MIN_KEY_LENGTH} characters`)
    if (keys.some(k => k.key === key)) throw new ConfigError('CMS_API_KEYS', 'the same key is listed twice')
    keys.push({ key, role: role as Role })
  }
  return keys
}

/** Parses and validates every setting. `cwd` resolves relative directories. */
export function loadConfig (env: Env, cwd: string = process.cwd()): Config {
  const port = integer(env, 'CMS_PORT', integer(env, 'PORT', 3000, 0, 65535), 0, 65535)
  const host = read(env, 'CMS_HOST') ?? '0.0.0.0'
  const dataDir = path.resolve(cwd, read(env, 'CMS_DATA_DIR') ?? './data')
  const typesDir = path.resolve(cwd, read(env, 'CMS_TYPES_DIR') ?? path.join(dataDir, 'types'))
  const assetsDir = path.resolve(cwd, read(env, 'CMS_ASSETS_DIR') ?? path.join(dataDir, 'assets'))

  const store = read(env, 'CMS_STORE') ?? 'sqlite'
  if (!(STORE_KINDS as readonly string[]).includes(store)) {
    throw new ConfigError('CMS_STORE', `must be 'sqlite', 'file' or 'postgres', got '${store}'`)
  }

  const publicUrl = httpUrl('CMS_PUBLIC_URL', read(env, 'CMS_PUBLIC_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '')

  const webhooks = list(env, 'CMS_WEBHOOKS').map(u => httpUrl('CMS_WEBHOOKS', u))

  const corsOrigins = list(env, 'CMS_CORS_ORIGINS')
  for (const origin of corsOrigins) if (origin !== '*') httpUrl('CMS_CORS_ORIGINS', origin)

  const logLevel = (read(env, 'CMS_LOG_LEVEL') ?? 'info').toLowerCase()
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('CMS_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got '${logLevel}'`)
  }

  return {
    port,
    host,
    dataDir,
    typesDir,
    assetsDir,
    store: store as StoreKind,
    databaseUrl: databaseUrl(env, store as StoreKind),
    databasePool: integer(env, 'CMS_DATABASE_POOL', 10, 1),
    publicUrl,
    apiKeys: apiKeys(env),
    locales: uniqueNames('CMS_LOCALES', list(env, 'CMS_LOCALES'), 'locale'),
    environments: uniqueNames('CMS_ENVIRONMENTS', list(env, 'CMS_ENVIRONMENTS'), 'environment'),
    webhooks,
    webhookSecret: read(env, 'CMS_WEBHOOK_SECRET') ?? null,
    webhookBackoffMs: integer(env, 'CMS_WEBHOOK_BACKOFF_MS', 2000, 1, 3_600_000),
    cacheMax: integer(env, 'CMS_CACHE_MAX', 10000, 0),
    cacheMaxBytes: integer(env, 'CMS_CACHE_MAX_BYTES', DEFAULT_CACHE_MAX_BYTES, 0),
    textCacheBytes: integer(env, 'CMS_TEXT_CACHE_BYTES', DEFAULT_TEXT_CACHE_BYTES, 0),
    entryCacheBytes: integer(env, 'CMS_ENTRY_CACHE_BYTES', DEFAULT_ENTRY_CACHE_BYTES, 0),
    bodyPoolBytes: integer(env, 'CMS_BODY_POOL_BYTES', DEFAULT_BODY_POOL_BYTES, 0),
    // At most a century: the retention cut-off must stay a date.
    syncRetentionDays: integer(env, 'CMS_SYNC_RETENTION_DAYS', 30, 1, 36500),
    revisions: integer(env, 'CMS_REVISIONS', DEFAULT_REVISIONS, 0),
    bodyLimit: integer(env, 'CMS_BODY_LIMIT', 1048576, 1),
    uploadLimit: integer(env, 'CMS_UPLOAD_LIMIT', 52428800, 1),
    trustProxy: boolean(env, 'CMS_TRUST_PROXY', false),
    corsOrigins,
    logLevel: logLevel as LogLevel,
    seed: boolean(env, 'CMS_SEED', true),
    compression: boolean(env, 'CMS_COMPRESSION', true),
    // At most a year: a forgotten browser should not stay signed in for ever.
    sessionHours: integer(env, 'CMS_SESSION_HOURS', 12, 1, 8760),
    previewUrl: previewUrl(env)
  }
}
