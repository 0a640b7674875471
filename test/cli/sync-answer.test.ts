// readSyncAnswer against JSON.parse: the same items, cursor and more, and each entry's bytes exactly
// the text the answer holds for it, whatever its strings hold (quotes, backslashes, brackets,
// non-ASCII), however the answer is spaced and in whatever order its members come.
import t from 'tap'
import { readSyncAnswer } from '../../lib/cli/sync-answer.js'

const TRICKY = ['plain', 'a "quoted" word', 'back\\slash\\', '\\"', '{[}]', 'Ünïcode ✓ 😀', 'line\nbreak\ttab', '', ',:']

/** A deterministic pseudo-random source, so a failure can be replayed. */
function random (seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  }
}

function entry (next: () => number, depth = 0): unknown {
  const pick = <T>(values: T[]): T => values[Math.floor(next() * values.length)] as T
  const kind = depth > 3 ? pick(['string', 'number', 'literal']) : pick(['string', 'number', 'literal', 'array', 'object'])
  if (kind === 'string') return pick(TRICKY)
  if (kind === 'number') return pick([0, -1.5, 1e21, 3.25e-7, 42])
  if (kind === 'literal') return pick([true, false, null])
  const size = Math.floor(next() * 4)
  if (kind === 'array') return Array.from({ length: size }, () => entry(next, depth + 1))
  return Object.fromEntries(Array.from({ length: size }, (_, i) => [`${pick(TRICKY)}${i}`, entry(next, depth + 1)]))
}

function answer (next: () => number): { items: Array<Record<string, unknown>>, cursor: string, more: boolean } {
  const items = Array.from({ length: Math.floor(next() * 5) }, (_, i) => {
    const upsert = next() < 0.7
    const item: Record<string, unknown> = { op: upsert ? 'upsert' : 'delete', collection: 'post', slug: `s-${i}`, seq: i + 1 }
    if (upsert) item.entry = { _slug: `s-${i}`, title: TRICKY[i % TRICKY.length], nested: entry(next) }
    // Members in another order now and then: the reader does not depend on it.
    return next() < 0.3 ? Object.fromEntries(Object.entries(item).reverse()) : item
  })
  return { items, cursor: 'c"ur\\sor', more: next() < 0.5 }
}

t.test('reads what JSON.parse reads, entries as their exact text', async t => {
  const next = random(25)
  for (let run = 0; run < 200; run++) {
    const value = answer(next)
    const text = JSON.stringify(value, null, run % 3 === 0 ? 2 : undefined)
    const read = readSyncAnswer(Buffer.from(text))
    const parsed = JSON.parse(text) as typeof value
    t.equal(read.cursor, parsed.cursor)
    t.equal(read.more, parsed.more)
    t.same(read.items.map(i => ({ ...i, entry: i.entry === undefined ? undefined : JSON.parse(i.entry.toString('utf8')) as unknown })),
      parsed.items.map(i => ({ op: i.op, collection: i.collection, slug: i.slug, entry: i.entry })))
    if (run % 3 !== 0) {
      // Compact text: each entry's bytes are JSON.stringify of it, the body of GET on it.
      t.same(read.items.map(i => i.entry?.toString('utf8')), parsed.items.map(i => i.entry === undefined ? undefined : JSON.stringify(i.entry)))
    }
  }
})

t.test('an empty answer, and unknown members skipped', async t => {
  t.same(readSyncAnswer(Buffer.from('{"items":[],"cursor":"c","more":false}')), { items: [], cursor: 'c', more: false })
  t.same(readSyncAnswer(Buffer.from('{"x":{},"items":[{"op":"delete","collection":"a","slug":"b","extra":[1,{"k":"]"}]}],"y":-1.5e3,"cursor":"c","more":true}')),
    { items: [{ op: 'delete', collection: 'a', slug: 'b' }], cursor: 'c', more: true })
})

t.test('refuses what is not a sync answer', async t => {
  const bad = [
    '',
    '[]',
    '{"items":[],"cursor":"c"}',
    '{"items":{},"cursor":"c","more":false}',
    '{"items":[{"op":"upsert","collection":"a","slug":"b"}],"cursor":"c","more":false}',
    '{"items":[{"op":"delete","collection":"a","slug":"b","entry":{}}],"cursor":"c","more":false}',
    '{"items":[{"op":"move","collection":"a","slug":"b"}],"cursor":"c","more":false}',
    '{"items":[{"op":"upsert","collection":"a","slug":"b","entry":{"x":"open}],"cursor":"c","more":false}',
    '{"items":[{"op":"upsert","collection":"a","slug":"b","entry":{"x":[1}',
    '{"items":[],"cursor":"c","more":false',
    '{"items":[] "cursor":"c","more":false}',
    '{items:[],"cursor":"c","more":false}',
    '{"items":[],"cursor":,"more":false}',
    '{"items":[],"cursor":"c","more":nope}'
  ]
  for (const text of bad) t.throws(() => readSyncAnswer(Buffer.from(text)), /Malformed sync answer|JSON/, text)
})
