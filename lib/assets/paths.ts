// Asset paths (contract §7): parsing what a client sends, normalizing folder names, and keeping
// every file operation inside the (environment's) assets directory.
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { badRequest } from '../errors.js'
import { normalizeSlug } from '../slug.js'

/** The URL prefix of an asset's `path` field. */
export const ASSETS_PREFIX = '/api/assets/'

export const MAX_FOLDER_DEPTH = 8
export const MAX_FOLDER_LENGTH = 200
export const MAX_PATH_LENGTH = 500
export const MAX_NAME_LENGTH = 230

/** Why a raw path is unsafe, or null. Checks one (already decoded) form. */
function unsafeReason (value: string): string | null {
  if (value.includes('\0')) return 'must not contain NUL'
  if (value.includes('\\')) return 'must not contain a backslash'
  // eslint-disable-next-line no-control-regex
  if (/[\x01-\x1f\x7f]/.test(value)) return 'must not contain control characters'
  if (value.startsWith('/') || /^[A-Za-z]:/.test(value) || value.startsWith('~')) return 'must be relative'
  if (value.split('/').some(s => s === '..')) return "must not contain '..'"
  return null
}

/**
 * Checks a path and every form it decodes to (the router decodes once; `%252e%252e` is `..`
 * encoded twice). Throws BAD_REQUEST naming `what` when any form is unsafe.
 */
function assertSafe (value: string, what: string): void {
  let current = value
  for (let round = 0; round < 4; round++) {
    const reason = unsafeReason(current)
    if (reason !== null) throw badRequest(`The ${what} ${reason}.`)
    if (!/%[0-9A-Fa-f]{2}/.test(current)) return
    let decoded: string
    try {
      decoded = decodeURIComponent(current)
    } catch {
      // Not valid percent-encoding: it cannot be a disguised separator either.
      return
    }
    if (decoded === current) return
    current = decoded
  }
  throw badRequest(`The ${what} is encoded too many times.`)
}

/**
 * The relative path of an asset inside its environment's directory (`photos/cat.jpg`) from the
 * path part of `/api/assets/<path>` or `/api/transform/<path>`. Throws BAD_REQUEST for `..`,
 * a backslash, NUL, an absolute prefix, an encoded form of these, or an empty or non-canonical
 * (`a//b`, `a/./b`) path.
 */
export function parseAssetPath (raw: string): string {
  if (typeof raw !== 'string' || raw === '') throw badRequest('The asset path must not be empty.')
  if (raw.length > MAX_PATH_LENGTH) throw badRequest(`The asset path must be at most ${MAX_PATH_LENGTH} characters.`)
  assertSafe(raw, 'asset path')
  const segments = raw.split('/')
  if (segments.some(s => s === '' || s === '.')) throw badRequest('The asset path must not contain empty or "." segments.')
  return segments.join('/')
}

/** The relative path inside `path` (`/api/assets/<p>`) as in the asset record; BAD_REQUEST otherwise. */
export function parseAssetRecordPath (recordPath: string): string {
  if (!recordPath.startsWith(ASSETS_PREFIX)) throw badRequest(`The path must start with ${ASSETS_PREFIX}.`)
  return parseAssetPath(recordPath.slice(ASSETS_PREFIX.length))
}

/** One folder segment normalized like a slug; null when nothing usable is left. */
function normalizeSegment (segment: string): string | null {
  const slug = normalizeSlug(segment.replace(/[^\p{L}\p{N}\s_-]+/gu, '-'))
  const safe = slug.replace(/[^a-z0-9-]/g, '').replace(/-+/g, '-').replace(/^-+|-+$/g, '')
  return safe === '' ? null : safe
}

/**
 * A folder as given in an upload or a list filter, each segment normalized like a slug:
 * `Photos/Summer 2024` → `photos/summer-2024`; '' is the root. Surrounding slashes of a
 * relative folder are tolerated (`photos/`), traversal is not.
 */
export function normalizeFolder (raw: string): string {
  const trimmed = raw.trim()
  if (trimmed === '') return ''
  assertSafe(trimmed, 'folder')
  const segments = trimmed.replace(/\/+$/, '').split('/')
  if (segments.length > MAX_FOLDER_DEPTH) throw badRequest(`The folder may have at most ${MAX_FOLDER_DEPTH} levels.`)
  const out: string[] = []
  for (const segment of segments) {
    if (segment.trim() === '' || segment === '.') throw badRequest('The folder must not contain empty or "." segments.')
    const normalized = normalizeSegment(segment)
    if (normalized === null) throw badRequest(`The folder segment '${segment}' has no usable characters.`)
    out.push(normalized)
  }
  const folder = out.join('/')
  if (folder.length > MAX_FOLDER_LENGTH) throw badRequest(`The folder must be at most ${MAX_FOLDER_LENGTH} characters.`)
  return folder
}

/** Splits a relative asset path into its folder ('' for the root) and file name. */
export function splitAssetPath (relative: string): { folder: string, name: string } {
  const at = relative.lastIndexOf('/')
  return at < 0 ? { folder: '', name: relative } : { folder: relative.slice(0, at), name: relative.slice(at + 1) }
}

export function joinAssetPath (folder: string, name: string): string {
  return folder === '' ? name : `${folder}/${name}`
}

/** True when `child` is `root` itself or lies below it (both absolute and resolved). */
export function isInside (root: string, child: string): boolean {
  if (child === root) return true
  const rel = path.relative(root, child)
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel)
}

/**
 * Where each environment's files live: `<assetsDir>/<environment>` with environments on,
 * `<assetsDir>` itself without. Environment names come from the settings, never from a request
 * (the scope resolves unknown names to the default).
 */
export class AssetRoots {
  constructor (
    readonly assetsDir: string,
    private readonly environments: readonly string[]
  ) {}

  /** The environments that have a directory of their own ('default' when environments are off). */
  get names (): string[] {
    return this.environments.length === 0 ? ['default'] : [...this.environments]
  }

  dir (environment: string): string {
    if (this.environments.length === 0) return this.assetsDir
    if (!this.environments.includes(environment)) throw new Error(`unknown environment '${environment}'`)
    return path.join(this.assetsDir, environment)
  }

  /** The absolute path of a (parsed) relative path, checked lexically to stay inside the root. */
  lexical (environment: string, relative: string): string {
    const root = this.dir(environment)
    const absolute = path.resolve(root, relative)
    if (!isInside(root, absolute) || absolute === root) throw badRequest('The asset path leaves the assets directory.')
    return absolute
  }
}

/**
 * The real (symlink-free) path of `absolute` when it lies inside the real path of `root`;
 * null when it does not exist or escapes (a symbolic link pointing outside counts as missing).
 * `knownRealRoot` saves resolving the root again.
 */
export async function realInside (root: string, absolute: string, knownRealRoot?: string): Promise<{ root: string, file: string } | null> {
  let realRoot: string
  let realFile: string
  try {
    realRoot = knownRealRoot ?? await realpath(root)
    realFile = await realpath(absolute)
  } catch (err) {
    if (isMissing(err)) return null
    throw err
  }
  if (realFile === realRoot || !isInside(realRoot, realFile)) return null
  return { root: realRoot, file: realFile }
}

/**
 * No file is there: none by that name, a file where a folder should be, or a name longer than
 * the file system allows (a request path may hold one; no asset can have it).
 */
export function isMissing (err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENAMETOOLONG'
}
