// The pure pieces both logs share: checks, retention, the sync rules, the in-memory index, the file format.
import t from 'tap'
import {
  announcedOp, changeRecord, cursorState, entryChange, isChange, matchesChangeFilter, recordMatchesEntry, retentionCutoff
} from '../../../../lib/store/changes/common.js'
import { headerLine, parseChangeLog, recordLine } from '../../../../lib/store/changes/format.js'
import { ChangeIndex } from '../../../../lib/store/changes/memory.js'
import type { ChangeFilter, ChangeRecord } from '../../../../types/changes.js'
import { tombstone, upsert } from './drivers.js'

const AT = '2025-01-01T00:00:00.000Z'
const main: ChangeFilter = { environment: 'default', locale: null }

t.test('retention cut-off: the period before now, as the stores write times', async t => {
  t.equal(retentionCutoff(new Date('2025-03-31T12:00:00.000Z'), 30), '2025-03-01T12:00:00.000Z')
  t.equal(retentionCutoff(new Date('2025-01-02T00:00:00.000Z'), 1), AT)
})

t.test('a change is checked field by field', async t => {
  t.ok(isChange(upsert('a', AT)))
  t.ok(isChange(tombstone('a', AT, { locale: 'en-GB', environment: 'staging' })))
  t.notOk(isChange(null))
  t.notOk(isChange({ ...upsert('a', AT), environment: 'a/b' }))
  t.notOk(isChange({ ...upsert('a', AT), slug: 'A B' }))
  t.notOk(isChange({ ...upsert('a', AT), op: 'create' }))
  t.notOk(isChange({ ...upsert('a', AT), at: 'yesterday' }))
  const record = changeRecord(7, { ...upsert('a', AT), extra: true } as never)
  t.strictSame(Object.keys(record), ['seq', 'environment', 'locale', 'collection', 'slug', 'op', 'status', 'at'], 'a record holds its fields only')
  t.ok(Object.isFrozen(record))
})

t.test('the change that says what an entry is, and whether a record does', async t => {
  const key = { environment: 'default', locale: null, collection: 'posts', slug: 'a' }
  const entry = { status: 'draft' as const, updatedAt: AT }
  t.strictSame(entryChange(key, entry, 'now'), { ...key, op: 'upsert', status: 'draft', at: AT })
  t.strictSame(entryChange(key, null, AT), { ...key, op: 'delete', status: null, at: AT })
  t.ok(recordMatchesEntry(upsert('a', AT, { status: 'draft' }), entry))
  t.notOk(recordMatchesEntry(upsert('a', AT), entry), 'another status')
  t.notOk(recordMatchesEntry(upsert('a', '2025-01-01T00:00:00.001Z', { status: 'draft' }), entry), 'another write')
  t.notOk(recordMatchesEntry(tombstone('a', AT), entry))
})

t.test('the filter of a read: collections, and what an initial run leaves out up to its start', async t => {
  const rec = (seq: number, change = upsert('a', AT)): ChangeRecord => changeRecord(seq, change)
  t.ok(matchesChangeFilter(rec(1), main, null))
  t.notOk(matchesChangeFilter(rec(1), main, new Set(['pages'])))
  const initial = { ...main, baseline: { seq: 5, publishedOnly: true } }
  t.notOk(matchesChangeFilter(rec(5, tombstone('a', AT)), initial, null))
  t.ok(matchesChangeFilter(rec(6, tombstone('a', AT)), initial, null))
  t.notOk(matchesChangeFilter(rec(4, upsert('a', AT, { status: 'draft' })), initial, null))
  t.ok(matchesChangeFilter(rec(4, upsert('a', AT, { status: 'draft' })), { ...main, baseline: { seq: 5, publishedOnly: false } }, null))
  t.ok(matchesChangeFilter(rec(4), initial, null))
})

t.test('the op of a sync item: the entry as read decides', async t => {
  const early = changeRecord(3, upsert('a', AT))
  const late = changeRecord(9, tombstone('a', AT))
  const cases: Array<[ChangeRecord, 'draft' | 'published' | undefined, boolean, number | undefined, 'upsert' | 'delete' | null]> = [
    [early, 'published', false, undefined, 'upsert'],
    [early, 'draft', false, undefined, 'upsert'],
    [early, 'draft', true, undefined, 'delete'], // became a draft: gone from the published view
    [early, undefined, false, undefined, 'delete'], // deleted since (its tombstone is not readable yet)
    [early, undefined, false, 5, null], // an initial run: absent at or below its start
    [early, 'draft', true, 5, null],
    [late, undefined, true, 5, 'delete'], // after the start: the client may hold it
    [late, 'published', true, 5, 'upsert'] // re-created since: the entry decides
  ]
  for (const [record, current, publishedOnly, baseline, expected] of cases) {
    t.equal(announcedOp(record, current, { publishedOnly, baseline }), expected, `${record.op} ${record.seq}, now ${current ?? 'absent'}, published only ${String(publishedOnly)}, baseline ${baseline ?? '-'}`)
  }
})

t.test('a cursor expires when compaction dropped a tombstone it has not seen, or when it is ahead of the log', async t => {
  const log = { horizon: 10, latest: 20 }
  t.equal(cursorState({ seq: 10 }, log), 'current')
  t.equal(cursorState({ seq: 9 }, log), 'expired')
  t.equal(cursorState({ seq: 21 }, log), 'expired')
  t.equal(cursorState({ seq: 2, baseline: 10 }, log), 'current', 'an initial run leaves out tombstones up to its start anyway')
  t.equal(cursorState({ seq: 2, baseline: 9 }, log), 'expired')
  t.equal(cursorState({ seq: 0 }, { horizon: 0, latest: 0 }), 'current')
})

t.test('the in-memory index: each key\'s latest record, pages in seq order', async t => {
  const index = new ChangeIndex()
  const a1 = changeRecord(1, upsert('a', AT))
  index.put(a1)
  index.put(changeRecord(2, upsert('b', AT)))
  index.put(changeRecord(3, upsert('a', AT, { status: 'draft' })))
  t.equal(index.size, 2)
  t.equal(index.get(a1)?.seq, 3)
  t.throws(() => { index.put(changeRecord(3, upsert('c', AT))) }, /seq 3 is not above 3/)
  t.strictSame(index.page(0, 10, main).records.map(r => r.seq), [2, 3])
  t.strictSame(index.page(0, 1, main), { records: [index.get({ ...a1, slug: 'b' })], more: true })
  t.strictSame(index.page(2, 1, main), { records: [index.get(a1)], more: false })
  t.notOk(index.remove(a1), 'a replaced record is not removed')
  t.ok(index.remove(index.get(a1) as ChangeRecord))
  t.strictSame(index.page(0, 10, main).records.map(r => r.seq), [2])
  t.strictSame([...index.records()].map(r => r.seq), [2])
})

t.test('the index keeps finding records after dead ones are swept out', async t => {
  const index = new ChangeIndex()
  let seq = 0
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < 10; i++) index.put(changeRecord(++seq, upsert(`e${i}`, AT)))
  }
  const page = index.page(0, 100, main)
  t.strictSame(page.records.map(r => r.seq), Array.from({ length: 10 }, (_, i) => 491 + i))
  t.strictSame(index.page(495, 100, main).records.map(r => r.slug), ['e5', 'e6', 'e7', 'e8', 'e9'])
})

t.test('the file format: a header, then one record per line; a torn or damaged part is told apart', async t => {
  const lines = [1, 2, 3].map(seq => recordLine(changeRecord(seq, upsert(`e${seq}`, AT))))
  const whole = Buffer.from(headerLine(4) + lines.join(''))
  const parsed = parseChangeLog(whole)
  t.strictSame([parsed.horizon, parsed.records.map(r => r.seq), parsed.validBytes, parsed.damage], [4, [1, 2, 3], whole.length, 'none'])
  t.equal(recordLine(changeRecord(9, tombstone('x', AT, { locale: 'en' }))), `[9,"default","en","posts","x","delete",null,"${AT}"]\n`)

  const torn = parseChangeLog(Buffer.concat([whole, Buffer.from('[4,"def')]))
  t.strictSame([torn.records.length, torn.validBytes, torn.damage], [3, whole.length, 'tail'])
  const zeros = parseChangeLog(Buffer.concat([whole, Buffer.alloc(100)]))
  t.strictSame([zeros.records.length, zeros.damage], [3, 'tail'], 'zeros after a crash')
  const noNewline = parseChangeLog(Buffer.from(headerLine(0) + lines.join('').slice(0, -1)))
  t.strictSame([noNewline.records.length, noNewline.damage], [2, 'tail'], 'a line without its newline is not whole')

  const middle = parseChangeLog(Buffer.from(headerLine(0) + lines[0] + 'garbage\n' + lines[2]))
  t.strictSame([middle.records.map(r => r.seq), middle.damage], [[1, 3], 'middle'])
  const backwards = parseChangeLog(Buffer.from(headerLine(0) + lines[1] + lines[0]))
  t.strictSame([backwards.records.map(r => r.seq), backwards.damage], [[2], 'tail'], 'a seq that does not grow is not valid')
  t.throws(() => parseChangeLog(Buffer.from('{"log":"lectern-changes","version":1,"horizon":-1}\n')), /does not start with/)
  t.throws(() => parseChangeLog(Buffer.from(headerLine(0).slice(0, -1))), /does not start with/)
})
