// The sync cursor (contract §9): where a client is in the change log, and the scope its run was
// started with, which the cursor carries (a request with `cursor` takes no scope parameter).
// It is opaque and signed: `<payload>.<mac>`, the payload base64url JSON, the mac an HMAC-SHA256
// of it under the server's sync key (secret.ts). A client can read it, but cannot forge or edit
// one (say, to another environment, or to drafts without a key); a cursor of another server
// (another key) is refused as malformed.
//
// A small pure API, also what `lectern export` writes into its manifest: an export is a valid
// initial sync whose cursor goes on from there.
import { createHmac, timingSafeEqual } from 'node:crypto'

/** What a sync cursor holds. */
export interface SyncCursor {
  environment: string
  /** null when locales are off. */
  locale: string | null
  /** The collections of the run (sorted); null for every current collection. */
  collections: string[] | null
  /** `_status=published`: drafts are absent from the view. */
  publishedOnly: boolean
  /** How far the client has read: the change log position (ChangeLog.since's `afterSeq`). */
  seq: number
  /** While in an initial run: the log's latest seq when it started (ChangeFilter `baseline`). */
  baseline?: number
}

const VERSION = 1
const MAC_BYTES = 32
/** Larger than any cursor we make (a long collection list included). */
const MAX_LENGTH = 8192

function mac (payload: string, secret: Uint8Array): Buffer {
  return createHmac('sha256', secret).update(payload).digest()
}

/** The cursor's text: opaque to clients, verifiable with the same secret. */
export function encodeSyncCursor (cursor: SyncCursor, secret: Uint8Array): string {
  const { environment, locale, collections, publishedOnly, seq, baseline } = cursor
  const payload = Buffer.from(JSON.stringify([VERSION, environment, locale, collections, publishedOnly, seq, baseline ?? null])).toString('base64url')
  return `${payload}.${mac(payload, secret).toString('base64url')}`
}

/** The cursor a text holds, or null when it is malformed or was not signed with `secret`. */
export function decodeSyncCursor (text: string, secret: Uint8Array): SyncCursor | null {
  if (text.length > MAX_LENGTH) return null
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(text)
  if (m === null) return null
  const [, payload, signature] = m as unknown as [string, string, string]
  const given = Buffer.from(signature, 'base64url')
  if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(payload, secret))) return null
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  return cursorOf(value)
}

/** A decoded payload as a cursor, checked field by field (a signed payload is ours, but of which version?). */
function cursorOf (value: unknown): SyncCursor | null {
  if (!Array.isArray(value) || value.length !== 7 || value[0] !== VERSION) return null
  const [, environment, locale, collections, publishedOnly, seq, baseline] = value as unknown[]
  if (typeof environment !== 'string' || (locale !== null && typeof locale !== 'string') || typeof publishedOnly !== 'boolean') return null
  if (collections !== null && !(Array.isArray(collections) && collections.every(c => typeof c === 'string'))) return null
  if (!isPosition(seq) || (baseline !== null && !isPosition(baseline))) return null
  const cursor: SyncCursor = { environment, locale, collections: collections as string[] | null, publishedOnly, seq }
  if (baseline !== null) cursor.baseline = baseline
  return cursor
}

function isPosition (value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}
