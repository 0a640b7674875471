// JSON Merge Patch (RFC 7396), for PATCH /api/content/<collection>/<slug> (contract §4).
import { isPlainObject, setOwn, type Data } from './entry.js'

/**
 * Applies `patch` to `target` as RFC 7396 §2 describes: an object patch merges member by member,
 * `null` removes a member, anything else (arrays included) replaces the target. Returns new
 * objects and never modifies its inputs, which may be a store's in-memory entry.
 */
export function applyMergePatch (target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch
  const result: Data = {}
  if (isPlainObject(target)) {
    for (const key of Object.keys(target)) setOwn(result, key, target[key])
  }
  for (const key of Object.keys(patch)) {
    const value = patch[key]
    if (value === null) {
      delete result[key]
    } else {
      const current = Object.hasOwn(result, key) ? result[key] : undefined
      setOwn(result, key, applyMergePatch(current, value))
    }
  }
  return result
}
