// Asset URLs inside entries (interface.md "Asset URLs inside entries", contract §7): stored
// relative (`/api/assets/...`), so content survives a change of host; expanded to absolute URLs
// on reads with `_resolve`. Both walk every string value of an entry, at any depth, copy on
// write: an entry without asset URLs is returned as it is, without allocating.
import { isPlainObject, setOwn, type Data } from './plan.js'

export const ASSET_PREFIX = '/api/assets/'

/** Maps every string of a JSON value through `fn`; the same value when `fn` changes nothing. */
function mapStrings (value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return fn(value)
  if (Array.isArray(value)) {
    let out: unknown[] | null = null
    for (let i = 0; i < value.length; i++) {
      const next = mapStrings(value[i], fn)
      if (next !== value[i]) {
        out ??= value.slice()
        out[i] = next
      }
    }
    return out ?? value
  }
  if (isPlainObject(value)) {
    let out: Data | null = null
    for (const key of Object.keys(value)) {
      const current = value[key]
      const next = mapStrings(current, fn)
      if (next !== current) {
        if (out === null) {
          out = {}
          for (const k of Object.keys(value)) setOwn(out, k, value[k])
        }
        setOwn(out, key, next)
      }
    }
    return out ?? value
  }
  return value
}

/** Removes `_environment=<environment>` from a URL's query string (what expandAssetUrls adds). */
function dropEnvironmentParam (url: string, environment: string): string {
  const q = url.indexOf('?')
  if (q === -1) return url
  const hash = url.indexOf('#', q)
  const query = url.slice(q + 1, hash === -1 ? undefined : hash)
  const wanted = `_environment=${encodeURIComponent(environment)}`
  const kept = query.split('&').filter(p => p !== wanted && p !== `_environment=${environment}`)
  const rest = hash === -1 ? '' : url.slice(hash)
  return url.slice(0, q) + (kept.length === 0 ? '' : `?${kept.join('&')}`) + rest
}

/**
 * Write side (create rule 10, and updates alike): every string that starts with
 * `<publicUrl>/api/assets/` becomes the relative `/api/assets/...` path. The
 * `_environment=<environment>` parameter a read may have added is dropped with it: the entry
 * lives in that environment already.
 */
export function relativizeAssetUrls (data: Data, publicUrl: string, environment: string): Data {
  const absolute = publicUrl + ASSET_PREFIX
  return mapStrings(data, s => s.startsWith(absolute) ? dropEnvironmentParam(s.slice(publicUrl.length), environment) : s) as Data
}

/** How a read expands relative asset paths (contract §7). */
export interface AssetUrlBase {
  publicUrl: string
  /** `_environment=<name>` for a non-default environment when environments are on, else null. */
  environmentParam: string | null
}

export function assetUrlBase (publicUrl: string, environments: readonly string[], environment: string): AssetUrlBase {
  const nonDefault = environments.length > 0 && environment !== environments[0]
  return { publicUrl, environmentParam: nonDefault ? `_environment=${encodeURIComponent(environment)}` : null }
}

function expandOne (s: string, base: AssetUrlBase): string {
  if (!s.startsWith(ASSET_PREFIX)) return s
  const url = base.publicUrl + s
  const param = base.environmentParam
  if (param === null || /[?&]_environment=/.test(s)) return url
  const hash = url.indexOf('#')
  const head = hash === -1 ? url : url.slice(0, hash)
  const tail = hash === -1 ? '' : url.slice(hash)
  return `${head}${head.includes('?') ? '&' : '?'}${param}${tail}`
}

/** expandAssetUrls without closures: it runs over every value of every entry a `_resolve` returns. */
function expandValue (value: unknown, base: AssetUrlBase): unknown {
  if (typeof value === 'string') {
    // 47 is '/': most strings are rejected on their first character.
    return value.charCodeAt(0) === 47 && value.startsWith(ASSET_PREFIX) ? expandOne(value, base) : value
  }
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    let out: unknown[] | null = null
    for (let i = 0; i < value.length; i++) {
      const next = expandValue(value[i], base)
      if (next !== value[i]) {
        out ??= value.slice()
        out[i] = next
      }
    }
    return out ?? value
  }
  if (!isPlainObject(value)) return value
  let out: Data | null = null
  const keys = Object.keys(value)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string
    const current = value[key]
    const next = expandValue(current, base)
    if (next !== current) {
      // Spread defines properties: a `__proto__` key stays an own property.
      out ??= { ...value }
      setOwn(out, key, next)
    }
  }
  return out ?? value
}

/**
 * Read side, with `_resolve`: every string that starts with `/api/assets/` becomes an absolute
 * URL under the public base URL, with `?_environment=<name>` for a non-default environment.
 */
export function expandAssetUrls<T> (value: T, base: AssetUrlBase): T {
  return expandValue(value, base) as T
}
