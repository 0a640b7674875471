// Entity tags for JSON responses (interface.md "Single-entry rules", contract §4): a quoted
// 64-bit hash of the exact body bytes, as 16 lowercase hex digits.
import { hash } from 'node:crypto'

/**
 * The ETag of a body: the first 8 bytes of its SHA-1 digest. One-shot `crypto.hash` runs in
 * native code (SHA-1 is hardware-accelerated on current CPUs) and costs about a microsecond for
 * a typical entry, less than any JavaScript 64-bit hash; collisions only need to be unlikely,
 * not infeasible, since the tag is not a security boundary. Strings are hashed as UTF-8, the
 * bytes that go on the wire.
 */
export function etagOf (body: string | Uint8Array): string {
  return `"${hash('sha1', body, 'hex').slice(0, 16)}"`
}

/** The tag without quotes or a weak prefix: `W/"abc"` → `abc`. */
function opaque (tag: string): string {
  let t = tag.trim()
  if (t.startsWith('W/') || t.startsWith('w/')) t = t.slice(2)
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) t = t.slice(1, -1)
  return t
}

/**
 * Whether an `If-None-Match` header matches `etag` (RFC 9110 §13.1.2, weak comparison): a
 * comma list of tags, each with or without quotes and `W/`, or `*` for any current representation.
 */
export function ifNoneMatch (header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false
  const wanted = opaque(etag)
  const values = Array.isArray(header) ? header : [header]
  for (const value of values) {
    for (const part of value.split(',')) {
      const candidate = part.trim()
      if (candidate === '*') return true
      if (candidate !== '' && opaque(candidate) === wanted) return true
    }
  }
  return false
}
