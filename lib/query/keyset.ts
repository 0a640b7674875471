// Keyset paging (contract §10): a list answer's `next` is the position of its last item in the
// query's order (sort keys, then slug), and `_after=<next>` asks for what follows it. Both stores
// compare against the position itself, never an offset, so a walk is stable under concurrent
// writes: an entry that exists, unchanged in its sort fields, throughout the walk is met once.
//
// The cursor is base64url JSON `[1, fingerprint, keys, slug]`. It holds nothing secret (the query
// that uses it says what may be read); the fingerprint, a hash of the query's scope, collection,
// status, filters, `_q` and sort, makes a cursor used with another query a 400.
//
// Lists of a fixed order (assets, webhook deliveries) use the same cursor: their order keys (typed
// by `KeyKind`), and the item's name in the slug's place; `afterParameter` reads their `_after`.
import { createHash } from 'node:crypto'
import { badRequest } from '../errors.js'
import { compareKeys, compareText, type Key } from './values.js'
import { keyOf } from './memory.js'
import type { KeysetPosition, ListQuery, SortKey } from '../../types/query.js'
import type { StoredEntry } from '../../types/store.js'

const VERSION = 1
/** A cursor longer than this is not one of ours (a page of 1,000 needs far less). */
const MAX_CURSOR_LENGTH = 16_384

/**
 * What a cursor is bound to: `context` names the list (environment, locale, collection), the
 * rest is the query but its paging and projection (`_per_page`, `_fields` and `_resolve` may
 * change between pages).
 */
export function queryFingerprint (context: string, query: Pick<ListQuery, 'status' | 'q' | 'filters' | 'sort'>): string {
  return listFingerprint([
    context, query.status, query.q,
    query.filters.map(f => [f.field.name, f.field.kind, f.field.array, f.op, f.value]),
    query.sort.map(s => [s.field.name, s.field.kind, s.direction])
  ])
}

/** What a cursor is bound to, from what defines the list (its name, scope and filters, as JSON values). */
export function listFingerprint (parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22)
}

/** The position of an entry in a query's order. */
export function positionOf (entry: StoredEntry, sort: readonly SortKey[]): KeysetPosition {
  return { keys: sort.map(key => keyOf(entry, key.field)), slug: entry.slug }
}

export function encodeAfter (fingerprint: string, position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([VERSION, fingerprint, position.keys, position.slug])).toString('base64url')
}

/** `_after`'s position; a 400 for a malformed cursor or one made for another query. */
export function decodeAfter (cursor: string, fingerprint: string, sort: readonly SortKey[]): KeysetPosition {
  return decodePosition(cursor, fingerprint, sort.length, () => true)
}

/** The kind of each order key of a fixed-order list: ISO times and names are strings, ordinals integers. */
export type KeyKind = 'string' | 'integer'

/**
 * `_after` of a list of fixed order (assets, webhook deliveries): null when absent, else the
 * position it names, whose keys have the kinds `kinds` says. A 400 with `_page` (contract §4),
 * and for a malformed cursor or one made for another query, worded as for content lists.
 */
export function afterParameter (cursor: string | undefined, page: unknown, fingerprint: string, kinds: readonly KeyKind[]): KeysetPosition | null {
  if (cursor === undefined) return null
  if (page !== undefined) throw badRequest('Parameters \'_after\' and \'_page\' cannot be used together (contract §4).')
  return decodePosition(cursor, fingerprint, kinds.length, keys => keys.every((key, i) => kinds[i] === 'string' ? typeof key === 'string' : Number.isSafeInteger(key)))
}

function decodePosition (cursor: string, fingerprint: string, keyCount: number, keysFit: (keys: readonly Key[]) => boolean): KeysetPosition {
  const malformed = badRequest('Invalid value for \'_after\': not a cursor this list gave (use the `next` of an earlier answer).')
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw malformed
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw malformed
  }
  if (!Array.isArray(value) || value.length !== 4 || value[0] !== VERSION || typeof value[1] !== 'string' || typeof value[3] !== 'string') throw malformed
  const keys: unknown = value[2]
  if (!Array.isArray(keys) || !keys.every(isKey)) throw malformed
  if (value[1] !== fingerprint || keys.length !== keyCount) {
    throw badRequest('Invalid value for \'_after\': the cursor belongs to another query; send the same filters, sort, `_q` and `_status` as the answer that gave it.')
  }
  if (!keysFit(keys)) throw malformed
  return { keys, slug: value[3] }
}

function isKey (value: unknown): value is Key {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
}

/** Where an entry lies relative to a position in the order of `sort`: < 0 before, 0 at, > 0 after. */
export function compareToPosition (entry: StoredEntry, sort: readonly SortKey[], position: KeysetPosition): number {
  for (let i = 0; i < sort.length; i++) {
    const key = sort[i] as SortKey
    const c = compareKeys(keyOf(entry, key.field), position.keys[i] as Key)
    if (c !== 0) return key.direction === 'desc' ? -c : c
  }
  return compareText(entry.slug, position.slug)
}

/** The index of the first entry after `position` in entries sorted by `sort` (binary search). */
export function firstAfter (sorted: ReadonlyArray<{ entry: StoredEntry }>, sort: readonly SortKey[], position: KeysetPosition): number {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (compareToPosition((sorted[mid] as { entry: StoredEntry }).entry, sort, position) > 0) high = mid
    else low = mid + 1
  }
  return low
}
