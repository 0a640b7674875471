// Entity tags for JSON responses (interface.md "Single-entry rules", contract §4): a quoted
// 64-bit hash of the exact body bytes, as 16 lowercase hex digits. And the one `If-None-Match`
// check, for these tags and image variants' alike.
import xxhash from 'xxhash-wasm'

// XXH64: a 64-bit hash by design, so the tag is the whole digest. Through WebAssembly it hashes
// a 68 KB page in about 8 µs where SHA-1 (truncated to 64 bits) took 36 µs; collisions only
// need to be unlikely, not infeasible, since the tag is not a security boundary.
const { h64Raw } = await xxhash()
const encoder = new TextEncoder()

/** The ETag of a body; strings are hashed as UTF-8, the bytes that go on the wire. */
export function etagOf (body: string | Uint8Array): string {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body
  return `"${h64Raw(bytes).toString(16).padStart(16, '0')}"`
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
