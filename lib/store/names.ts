// The names that address an entry: checked before they reach SQL text or become path segments
// of the file store, whatever the caller has checked already.
import { badRequest } from '../errors.js'
import { isNormalSlug } from '../slug.js'
import type { Scope } from '../../types/scope.js'

/** Collection names are schema names (interface.md Limits): lowercase letters, digits, underscore. */
export const COLLECTION_RE = /^[a-z0-9_]{1,64}$/
/** Locale and environment names, as the settings accept them (lib/config.ts), at most 64 characters. */
export const SCOPE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

export function isCollectionName (name: unknown): name is string {
  return typeof name === 'string' && COLLECTION_RE.test(name)
}

export function isScopeName (name: unknown): name is string {
  return typeof name === 'string' && SCOPE_NAME_RE.test(name)
}

/** A normalized slug (lib/slug.ts): lowercase letters, digits and single hyphens; no path characters. */
export const isSlug: (slug: unknown) => slug is string = isNormalSlug

/** Throws a 400 unless the collection and scope names are safe. */
export function checkBucket (scope: Scope, collection: string): void {
  if (!isCollectionName(collection)) throw badRequest('Invalid collection name.')
  if (!isScopeName(scope.environment)) throw badRequest('Invalid environment name.')
  if (scope.locale !== null && !isScopeName(scope.locale)) throw badRequest('Invalid locale name.')
}

/** Throws a 400 unless the slug is a normalized slug (lib/slug.ts checkSlug reports, this refuses). */
export function assertStoredSlug (slug: string): void {
  if (!isSlug(slug)) throw badRequest('Invalid slug.')
}
