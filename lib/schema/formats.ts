// String formats of the field types (contract §5), written out here rather than borrowed from
// ajv-formats so that each one means exactly what the README says it means.
import { isNormalSlug } from '../slug.js'

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATETIME_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/
// The local part of an address (dot-atom) and a host name with at least one dot.
const EMAIL_RE = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/
const COLOR_RE = /^#[0-9a-fA-F]{6}$/
const HTTP_URL_RE = /^https?:\/\/[^\s/?#]+/i
export const ASSET_PATH_PREFIX = '/api/assets/'

function daysInMonth (year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

/** `YYYY-MM-DD`, a real calendar date (2023-02-29 is not). */
export function isDate (value: string): boolean {
  const m = DATE_RE.exec(value)
  if (m === null) return false
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

/**
 * ISO 8601 date and time with an offset: `YYYY-MM-DDTHH:MM[:SS[.fraction]](Z|±HH:MM)`.
 * A time without an offset is ambiguous and rejected.
 */
export function isDateTime (value: string): boolean {
  const m = DATETIME_RE.exec(value)
  if (m === null) return false
  const [, date, hour, minute, second, offsetHour, offsetMinute] = m
  if (date === undefined || !isDate(date)) return false
  if (Number(hour) > 23 || Number(minute) > 59) return false
  if (second !== undefined && Number(second) > 59) return false
  if (offsetHour !== undefined && (Number(offsetHour) > 23 || Number(offsetMinute) > 59)) return false
  return true
}

export function isEmail (value: string): boolean {
  if (value.length > 254) return false
  const at = value.lastIndexOf('@')
  if (at < 1 || at > 64) return false
  return EMAIL_RE.test(value)
}

/** An absolute `http:` or `https:` URL with a host. */
export function isHttpUrl (value: string): boolean {
  if (!HTTP_URL_RE.test(value) || /\s/.test(value)) return false
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

/** A relative asset path `/api/assets/<path>` (no `.`/`..` segments, backslashes or control characters). */
export function isAssetPath (value: string): boolean {
  if (!value.startsWith(ASSET_PATH_PREFIX)) return false
  const q = value.indexOf('?')
  const rest = value.slice(ASSET_PATH_PREFIX.length, q === -1 ? undefined : q)
  if (rest === '' || rest.includes('\\') || rest.includes('#') || /[\s\p{Cc}]/u.test(rest)) return false
  return rest.split('/').every(segment => segment !== '' && segment !== '.' && segment !== '..')
}

/** An asset value: a relative `/api/assets/...` path, or an absolute http(s) URL (an external file). */
export function isAssetReference (value: string): boolean {
  return isAssetPath(value) || isHttpUrl(value)
}

/**
 * A `url` value: an absolute http(s) URL, or a relative `/api/assets/...` path. Writes store a
 * URL under `CMS_PUBLIC_URL/api/assets/` as that relative path (interface.md, asset URLs), so
 * an entry read without `_resolve` and written back must still validate.
 */
export function isUrl (value: string): boolean {
  return isHttpUrl(value) || isAssetPath(value)
}

export function isColor (value: string): boolean {
  return COLOR_RE.test(value)
}

/** The formats the compiler registers with ajv, by name. */
export const FORMATS: Readonly<Record<string, (value: string) => boolean>> = {
  'cms-date': isDate,
  'cms-datetime': isDateTime,
  'cms-email': isEmail,
  'cms-url': isUrl,
  'cms-asset': isAssetReference,
  'cms-slug': isNormalSlug,
  'cms-color': isColor
}
