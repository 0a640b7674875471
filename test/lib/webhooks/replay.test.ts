// The outbox's catch-up with the change log (lib/webhooks/replay.ts), over a log held in memory:
// which records are announced at start, where the floor goes, and how it moves while running.
import path from 'node:path'
import t, { type Test } from 'tap'
import { Outbox } from '../../../lib/webhooks/outbox.js'
import { WebhookService } from '../../../lib/webhooks/service.js'
import type { ChangeFilter, ChangeRecord } from '../../../types/changes.js'
import type { StoredEntry } from '../../../types/store.js'
import { tempDir } from '../../helper.js'
import type { ChangeSource } from '../../../lib/webhooks/replay.js'
import { closedPortUrl, until } from './receiver.js'

const AT = '2026-01-01T00:00:00.000Z'
const LATER = '2026-01-02T00:00:00.000Z'

function rec (seq: number, slug: string, op: 'upsert' | 'delete' = 'upsert', environment = 'default'): ChangeRecord {
  return { seq, environment, locale: null, collection: 'post', slug, op, status: op === 'delete' ? null : 'published', at: AT }
}

/** A change log over an array, paged as the stores page it (two records a page, to page). */
function source (records: ChangeRecord[], entries: Record<string, StoredEntry> = {}): ChangeSource {
  return {
    scopes: [{ environment: 'default', locale: null }, { environment: 'staging', locale: null }],
    entry: async (_scope, _collection, slug) => entries[slug],
    log: {
      since: async (after: number, limit: number, filter: ChangeFilter) => {
        const all = records.filter(r => r.seq > after && r.environment === filter.environment && r.locale === filter.locale)
        const page = all.slice(0, Math.min(limit, 2))
        const more = all.length > page.length
        return { records: page, more, upTo: more ? (page.at(-1) as ChangeRecord).seq : Math.max(after, ...records.map(r => r.seq)) }
      },
      latestSeq: async () => Math.max(0, ...records.map(r => r.seq)),
      horizon: async () => 0,
      compact: async () => ({ dropped: 0, horizon: 0 })
    }
  }
}

async function setup (t: Test): Promise<{ file: string, url: string }> {
  return { file: path.join(tempDir(t), 'outbox.db'), url: await closedPortUrl() }
}

function serviceOn (t: Test, file: string, url: string, compactEvery = 1000): WebhookService {
  const s = new WebhookService({ urls: [url], secret: null, backoffMs: 3_600_000, outboxFile: file, compactEvery })
  t.teardown(async () => { await s.close() })
  return s
}

/** The outbox's floor, read through a connection of its own. */
function announced (file: string): { floor: number | null } {
  const outbox = new Outbox(file)
  try {
    return { floor: outbox.announcedFloor() }
  } finally {
    outbox.close()
  }
}

t.test('a new outbox starts at the latest seq and announces nothing', async t => {
  const { file, url } = await setup(t)
  const s = serviceOn(t, file, url)
  t.equal(await s.catchUp(source([rec(1, 'a'), rec(2, 'b')])), 0)
  t.equal(announced(file).floor, 2)
  t.equal((await s.deliveries({})).total, 0)
})

t.test('the records above the floor never recorded are announced, in every scope; the floor passes them', async t => {
  const { file, url } = await setup(t)
  const first = serviceOn(t, file, url)
  await first.catchUp(source([]))
  // Recorded while running: seqs 2 and 4 (their writes' events).
  for (const seq of [2, 4]) first.record({ event: 'content.updated', collection: 'post', slug: `s${seq}`, locale: null, environment: 'default', seq, status: 'published', previous_status: 'draft' })
  await first.close()

  const entries: Record<string, StoredEntry> = {
    fresh: { slug: 'fresh', status: 'published', data: {}, createdAt: AT, updatedAt: AT },
    edited: { slug: 'edited', status: 'published', data: {}, createdAt: AT, updatedAt: LATER }
  }
  const log = [rec(1, 'fresh'), rec(2, 's2'), rec(3, 'edited'), rec(4, 's4'), rec(5, 'gone', 'delete'), rec(6, 'other', 'upsert', 'staging'), rec(7, 'elsewhere', 'upsert', 'production')]
  const second = serviceOn(t, file, url)
  t.equal(await second.catchUp(source(log, entries)), 4, 'seqs 1, 3, 5 and 6; not 7, outside the served scopes')
  const events = (await second.deliveries({ perPage: 100 })).items.map(d => d.event)
  t.strictSame(events.reverse(), ['content.updated', 'content.updated', 'content.created', 'content.updated', 'content.deleted', 'content.updated'])
  await second.close()
  t.equal(announced(file).floor, 7, 'the floor is the latest seq read: every record at or below it is announced')

  const third = serviceOn(t, file, url)
  t.equal(await third.catchUp(source(log, entries)), 0, 'nothing twice')
})

t.test('while running, the floor follows the records, stopping below one not yet recorded', async t => {
  const { file, url } = await setup(t)
  const log: ChangeRecord[] = []
  const s = serviceOn(t, file, url, 2)
  await s.catchUp(source(log))
  s.start()
  // Seq 9 is in the log but its event is not recorded yet (a write between commit and event).
  log.push(rec(7, 'a'), rec(8, 'b'), rec(9, 'c'))
  for (const [seq, slug] of [[7, 'a'], [8, 'b']] as const) s.record({ event: 'content.created', collection: 'post', slug, locale: null, environment: 'default', seq, status: 'published', previous_status: null })
  await until(() => announced(file).floor === 8, 5000, 'the floor at 8')
  s.record({ event: 'content.created', collection: 'post', slug: 'c', locale: null, environment: 'default', seq: 9, status: 'published', previous_status: null })
  s.record({ event: 'schema.created', name: 'not-a-change' })
  log.push(rec(10, 'd'))
  s.record({ event: 'content.created', collection: 'post', slug: 'd', locale: null, environment: 'default', seq: 10, status: 'published', previous_status: null })
  await until(() => announced(file).floor === 10, 5000, 'the floor at 10')
})
