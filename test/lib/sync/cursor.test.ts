// lib/sync: the signed cursor (the pure API `lectern export` uses too), the data dir's key, and
// the service's 410 when compaction has passed a cursor.
import { createHmac } from 'node:crypto'
import { writeFileSync, statSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { decodeSyncCursor, encodeSyncCursor, type SyncCursor } from '../../../lib/sync/cursor.js'
import { loadSyncSecret, SYNC_KEY_FILE } from '../../../lib/sync/secret.js'
import { SyncService } from '../../../lib/sync/service.js'
import type { ChangeLog } from '../../../types/changes.js'
import { tempDir } from '../../helper.js'

const secret = Buffer.alloc(32, 7)
const cursor: SyncCursor = { environment: 'main', locale: 'en', collections: ['a', 'b'], publishedOnly: true, seq: 12, baseline: 40 }

t.test('a cursor round-trips, and only with its secret', async t => {
  const text = encodeSyncCursor(cursor, secret)
  t.match(text, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
  t.same(decodeSyncCursor(text, secret), cursor)
  const plain = { environment: 'main', locale: null, collections: null, publishedOnly: false, seq: 0 }
  t.same(decodeSyncCursor(encodeSyncCursor(plain, secret), secret), plain, 'no baseline, no locale, every collection')
  t.equal(decodeSyncCursor(text, Buffer.alloc(32, 8)), null, 'another secret')
  const [payload, mac] = text.split('.') as [string, string]
  for (const bad of ['', 'x', `${payload}.`, `${payload}.${mac.slice(1)}`, `${payload}x.${mac}`, `${payload}.${mac}.x`, 'a'.repeat(9000)]) {
    t.equal(decodeSyncCursor(bad, secret), null, `malformed: ${bad.slice(0, 20)}`)
  }
  // Signed (HMAC-SHA256 of the payload text, as documented) but not a cursor of this version or shape: refused too.
  const signed = (value: unknown): string => {
    const p = Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
    return `${p}.${createHmac('sha256', secret).update(p).digest('base64url')}`
  }
  t.same(decodeSyncCursor(signed([1, 'main', null, null, true, 1, null]), secret), { environment: 'main', locale: null, collections: null, publishedOnly: true, seq: 1 }, 'the documented signing')
  for (const value of [[2, 'main', null, null, true, 1, null], [1, 'main', null, null, 'yes', 1, null], [1, 'main', null, [1], true, 1, null],
    [1, 'main', null, null, true, -1, null], [1, 'main', null, null, true, 1, 1.5], [1, 5, null, null, true, 1, null], { a: 1 }, '{not json']) {
    t.equal(decodeSyncCursor(signed(value), secret), null, JSON.stringify(value))
  }
})

t.test('the key is made once per data dir, kept 0600, and reused', async t => {
  const dir = tempDir(t)
  const first = await loadSyncSecret(dir)
  t.equal(first.length, 32)
  t.equal(statSync(path.join(dir, SYNC_KEY_FILE)).mode & 0o777, 0o600)
  t.same(await loadSyncSecret(dir), first, 'read back')
  writeFileSync(path.join(dir, SYNC_KEY_FILE), 'nope')
  await t.rejects(loadSyncSecret(dir), /sync\.key.*64 hex digits/)
  await t.rejects(loadSyncSecret(path.join(dir, SYNC_KEY_FILE, 'x')), /ENOTDIR/)
})

t.test('a cursor below the horizon, or ahead of the log, is a 410 CURSOR_EXPIRED', async t => {
  const log = (horizon: number, latest: number): ChangeLog => ({
    since: async () => ({ records: [], more: false, upTo: latest }),
    latestSeq: async () => latest,
    horizon: async () => horizon,
    compact: async () => ({ dropped: 0, horizon })
  })
  const caller = { role: 'admin' as const, authenticated: true, invalidKey: false }
  const scopeOf = (): { environment: string, locale: null } => ({ environment: 'main', locale: null })
  const at = (seq: number): string => encodeSyncCursor({ environment: 'main', locale: null, collections: null, publishedOnly: false, seq }, secret)
  const service = (horizon: number, latest: number): SyncService =>
    new SyncService({ store: { changes: log(horizon, latest), getMany: async () => new Map() }, registry: { collection: () => null }, entryText: () => ({ json: '{}', bytes: 2 }), secret })
  const expired = async (s: SyncService, seq: number): Promise<void> => {
    await t.rejects(s.read({ cursor: at(seq) }, caller, scopeOf), { code: 'CURSOR_EXPIRED', statusCode: 410 })
  }
  await expired(service(10, 20), 5)
  await expired(service(0, 20), 21)
  t.match(JSON.parse((await service(10, 20).read({ cursor: at(10) }, caller, scopeOf)).body.toString()), { items: [], more: false })
})
