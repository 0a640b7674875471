import t from 'tap'
import { RecentChanges } from '../../../../lib/store/changes/recent.js'
import { changeRecord } from '../../../../lib/store/changes/common.js'
import type { ChangeFilter } from '../../../../types/changes.js'
import { tombstone, upsert } from './drivers.js'

const AT = '2025-01-01T00:00:00.000Z'
const main: ChangeFilter = { environment: 'default', locale: null }
const slugs = (records: ReadonlyArray<{ seq: number, slug: string }>): string[] => records.map(r => `${r.seq}:${r.slug}`)

t.test('holds every record above its position; a newer record of a key replaces the older', async t => {
  const recent = new RecentChanges(10, 4)
  t.equal(recent.latest, 4)
  t.notOk(recent.covers(3), 'a position before what it holds')
  t.ok(recent.covers(4))
  t.throws(() => recent.page(3, 10, main), RangeError)
  recent.add([changeRecord(5, upsert('a', AT)), changeRecord(6, upsert('b', AT)), changeRecord(7, tombstone('a', AT))])
  t.equal(recent.latest, 7)
  t.strictSame(slugs(recent.page(4, 10, main).records), ['6:b', '7:a'])
  t.strictSame([slugs(recent.page(4, 1, main).records), recent.page(4, 1, main).more], [['6:b'], true])
  t.strictSame(recent.page(7, 10, main).records, [])
  t.throws(() => { recent.add([changeRecord(7, upsert('c', AT))]) }, RangeError, 'seqs only grow')
})

t.test('past its capacity it keeps the newest half and its position moves up', async t => {
  const recent = new RecentChanges(4)
  recent.add([1, 2, 3, 4].map(seq => changeRecord(seq, upsert(`s${seq}`, AT))))
  t.ok(recent.covers(0), 'at capacity: all held')
  recent.add([changeRecord(5, upsert('s5', AT))])
  t.notOk(recent.covers(2))
  t.ok(recent.covers(3), 'the newest let go is the new position')
  t.strictSame(slugs(recent.page(3, 10, main).records), ['4:s4', '5:s5'])
  recent.reset(9)
  t.strictSame([recent.latest, recent.covers(8), recent.page(9, 10, main).records], [9, false, []])
  t.throws(() => new RecentChanges(1), RangeError)
})
