import t, { type Test } from 'tap'
import { JsonMemo, spliceJson } from '../../../lib/content/json-memo.js'
import { CmsError } from '../../../lib/errors.js'
import { assetUrlBase } from '../../../lib/references/asset-urls.js'
import { compilePlan, type ReferencePlan } from '../../../lib/references/plan.js'
import {
  ResolvedTexts, parseResolve, resolveEntries, resolveRootTexts, type EntryView, type ResolveContext
} from '../../../lib/references/resolve.js'
import type { FieldDefinition } from '../../../types/schema.js'
import type { StoredEntry } from '../../../types/store.js'
import { Entries, SCOPE, entry } from './fakes.js'

const schemas: Record<string, Record<string, FieldDefinition>> = {
  posts: {
    title: { field_type: 'string' },
    author: { field_type: 'reference', collection: 'authors' },
    tags: { field_type: 'reference', collection: 'tags', multiple: true },
    seo: { field_type: 'object', fields: { image: { field_type: 'asset' }, by: { field_type: 'reference', collection: 'authors' } } },
    related: { field_type: 'array', items: { field_type: 'reference', collection: 'posts' } }
  },
  authors: {
    name: { field_type: 'string' },
    avatar: { field_type: 'asset' },
    best: { field_type: 'reference', collection: 'posts' },
    friends: { field_type: 'reference', collection: 'authors', multiple: true }
  },
  tags: { label: { field_type: 'string' } }
}
const plans = new Map<string, ReferencePlan>(Object.entries(schemas).map(([name, fields]) => [name, compilePlan(fields)]))
const postsPlan = plans.get('posts') as ReferencePlan

const PUBLIC = 'http://cms.test'

function context (entries: Entries, seesDrafts = true, environment = 'default'): ResolveContext {
  return {
    scope: { ...SCOPE, environment },
    seesDrafts,
    planOf: c => plans.get(c) ?? null,
    getMany: entries.getMany,
    assets: assetUrlBase(PUBLIC, environment === 'default' ? [] : ['main', environment], environment)
  }
}

function view (e: StoredEntry): EntryView {
  return { _slug: e.slug, _status: e.status, _created_at: e.createdAt, _updated_at: e.updatedAt, ...e.data }
}

function badRequest (t: Test, fn: () => unknown, pattern: RegExp): void {
  try {
    fn()
    t.fail('expected a 400')
  } catch (err) {
    t.ok(err instanceof CmsError && err.code === 'BAD_REQUEST', 'a 400')
    t.match((err as Error).message, pattern)
  }
}

t.test('parseResolve', async t => {
  t.equal(parseResolve(undefined, postsPlan, 'posts'), null)
  t.equal(parseResolve('0', postsPlan, 'posts'), null)
  t.equal(parseResolve('false', postsPlan, 'posts'), null)
  t.same(parseResolve('1', postsPlan, 'posts'), { depth: 1, fields: null, key: '1' })
  t.same(parseResolve('true', postsPlan, 'posts'), { depth: 1, fields: null, key: '1' }, '1 and true are the same request')
  t.same(parseResolve('TRUE', postsPlan, 'posts')?.key, '1')
  for (const n of [2, 3, 4, 5]) t.same(parseResolve(String(n), postsPlan, 'posts'), { depth: n, fields: null, key: String(n) })
  const spec = parseResolve(' tags , author,tags', postsPlan, 'posts')
  t.same(spec?.depth, 1)
  t.same([...spec?.fields ?? []], ['author', 'tags'])
  t.equal(spec?.key, 'author,tags', 'canonical: sorted, deduplicated')
  t.same([...parseResolve('seo.by,related', postsPlan, 'posts')?.fields ?? []], ['related', 'seo.by'], 'dotted paths and arrays of references')
  badRequest(t, () => parseResolve('6', postsPlan, 'posts'), /^_resolve: the depth must be from 1 to 5/)
  badRequest(t, () => parseResolve('10', postsPlan, 'posts'), /^_resolve/)
  badRequest(t, () => parseResolve('title', postsPlan, 'posts'), /^_resolve: 'title' is not a reference field of 'posts' \(reference fields: author, tags, seo\.by, related\)/)
  badRequest(t, () => parseResolve('author,nope', postsPlan, 'posts'), /^_resolve: 'nope'/)
  badRequest(t, () => parseResolve('', postsPlan, 'posts'), /^_resolve must be/)
  badRequest(t, () => parseResolve(' , ', postsPlan, 'posts'), /^_resolve must be/)
  badRequest(t, () => parseResolve(['1', '2'], postsPlan, 'posts'), /^_resolve must be/)
  badRequest(t, () => parseResolve('-1', postsPlan, 'posts'), /^_resolve/)
  badRequest(t, () => parseResolve('author', plans.get('tags') as ReferencePlan, 'tags'), /it has none/)
})

t.test('one level: single, multiple, nested and array references, with system fields, in one read per collection', async t => {
  const jane = entry('jane', { name: 'Jane', avatar: '/api/assets/jane.png', best: 'p2', friends: ['joe'] })
  const joe = entry('joe', { name: 'Joe' })
  const p2 = entry('p2', { title: 'Two', author: 'joe' })
  const entries = new Entries()
    .put('authors', jane).put('authors', joe)
    .put('tags', entry('a', { label: 'A' })).put('tags', entry('b', { label: 'B' }))
    .put('posts', p2)
  const p1 = entry('p1', { title: 'One', author: 'jane', tags: ['b', 'a'], seo: { image: '/api/assets/p1.png', by: 'joe' }, related: ['p2'] })
  const { views, collections } = await resolveEntries([view(p1)], 'posts', { depth: 1, fields: null, key: '1' }, context(entries))
  t.same(views, [{
    ...view(p1),
    author: { ...view(jane), avatar: `${PUBLIC}/api/assets/jane.png` },
    tags: [view(entry('b', { label: 'B' })), view(entry('a', { label: 'A' }))],
    seo: { image: `${PUBLIC}/api/assets/p1.png`, by: view(joe) },
    related: [view(p2)]
  }], 'resolved entries keep their own references as slugs at the last level; asset paths expanded everywhere')
  t.same(entries.reads.sort(), ['authors:jane,joe', 'posts:p2', 'tags:a,b'], 'one batched read per collection')
  t.same([...collections].sort(), ['authors', 'posts', 'tags'])
})

t.test('missing targets and hidden drafts: null for a single reference, left out of a multiple one', async t => {
  const entries = new Entries()
    .put('authors', entry('draft', { name: 'D' }, 'draft'))
    .put('tags', entry('a', { label: 'A' })).put('tags', entry('hidden', { label: 'H' }, 'draft'))
    .put('posts', entry('p2', { title: 'draft post' }, 'draft'))
  const root = view(entry('p1', { author: 'draft', tags: ['a', 'gone', 'hidden'], seo: { by: 'gone' }, related: ['p2', 'gone'] }))
  const anonymous = (await resolveEntries([root], 'posts', { depth: 1, fields: null, key: '1' }, context(entries, false))).views[0]
  t.equal(anonymous?.author, null, 'a draft hidden from the caller is null')
  t.same((anonymous?.tags as EntryView[]).map(v => v._slug), ['a'], 'missing and hidden targets are left out')
  t.same(anonymous?.seo, { by: null })
  t.same(anonymous?.related, [], 'an array of references drops them too')

  const editor = (await resolveEntries([root], 'posts', { depth: 1, fields: null, key: '1' }, context(entries, true))).views[0]
  t.equal((editor?.author as EntryView)._status, 'draft', 'a caller who sees drafts gets them')
  t.same((editor?.tags as EntryView[]).map(v => v._slug), ['a', 'hidden'])
  t.same((editor?.related as EntryView[]).map(v => v._slug), ['p2'])
})

t.test('depth n, and no cycles: an entry already on the path stays a slug', async t => {
  const entries = new Entries()
    .put('posts', entry('a', { title: 'A', related: ['b'] }))
    .put('posts', entry('b', { title: 'B', related: ['a', 'c'] }))
    .put('posts', entry('c', { title: 'C', related: ['b', 'd'] }))
    .put('posts', entry('d', { title: 'D', related: ['a'] }))
  const root = view((await entries.getMany(SCOPE, 'posts', ['a'])).get('a') as StoredEntry)
  entries.reads.length = 0

  const one = (await resolveEntries([root], 'posts', { depth: 1, fields: null, key: '1' }, context(entries))).views[0] as EntryView
  t.same((one.related as EntryView[])[0]?.related, ['a', 'c'], 'depth 1: the resolved entry keeps slugs')

  const two = (await resolveEntries([root], 'posts', { depth: 2, fields: null, key: '2' }, context(entries))).views[0] as EntryView
  const b2 = (two.related as EntryView[])[0] as EntryView
  t.same((b2.related as unknown[])[0], 'a', 'a→b→a: a is on the path, left as its slug')
  t.same(((b2.related as unknown[])[1] as EntryView)._slug, 'c')
  t.same(((b2.related as unknown[])[1] as EntryView).related, ['b', 'd'], 'the last level keeps slugs')

  entries.reads.length = 0
  const five = (await resolveEntries([root], 'posts', { depth: 5, fields: null, key: '5' }, context(entries))).views[0] as EntryView
  const b = (five.related as EntryView[])[0] as EntryView
  const c = (b.related as unknown[])[1] as EntryView
  t.equal((c.related as unknown[])[0], 'b', 'b is on the path a→b→c')
  const d = (c.related as unknown[])[1] as EntryView
  t.same(d.related, ['a'], 'a→b→c→d→a: a stays a slug')
  t.same(entries.reads, ['posts:b', 'posts:a,c', 'posts:d'], 'one read per level, each entry once, stops when nothing is new')

  const self = new Entries().put('posts', entry('s', { related: ['s'] }))
  const out = (await resolveEntries([view(entry('s', { related: ['s'] }))], 'posts', { depth: 3, fields: null, key: '3' }, context(self))).views[0]
  t.same(out?.related, ['s'], 'a self-reference stays a slug')
  t.doesNotThrow(() => JSON.stringify(five), 'the result is a tree JSON can write')
})

t.test('the same entry on two paths resolves per path', async t => {
  const entries = new Entries()
    .put('authors', entry('jane', { name: 'Jane', best: 'p1' }))
  const p1 = view(entry('p1', { author: 'jane' }))
  const p2 = view(entry('p2', { author: 'jane' }))
  entries.put('posts', entry('p1', { author: 'jane' }))
  const { views } = await resolveEntries([p1, p2], 'posts', { depth: 2, fields: null, key: '2' }, context(entries))
  t.equal((views[0]?.author as EntryView).best, 'p1', 'p1→jane→p1: on the path, a slug')
  t.equal(((views[1]?.author as EntryView).best as EntryView)._slug, 'p1', 'p2→jane→p1: resolved')
})

t.test('a field list resolves only those fields, one level', async t => {
  const entries = new Entries()
    .put('authors', entry('jane', { name: 'Jane', best: 'p2' })).put('authors', entry('joe', { name: 'Joe' }))
    .put('tags', entry('a', {}))
  const root = view(entry('p1', { author: 'jane', tags: ['a'], seo: { by: 'joe' } }))
  const out = (await resolveEntries([root], 'posts', { depth: 1, fields: new Set(['seo.by']), key: 'seo.by' }, context(entries))).views[0] as EntryView
  t.equal(out.author, 'jane')
  t.same(out.tags, ['a'])
  t.equal(((out.seo as Record<string, unknown>).by as EntryView).name, 'Joe')
  t.same(entries.reads, ['authors:joe'], 'only what the listed fields need is read')
})

t.test('many roots: still one read per (collection, level)', async t => {
  const entries = new Entries()
  for (let i = 0; i < 10; i++) entries.put('authors', entry(`a${i}`, { name: `A${i}` }))
  const roots = Array.from({ length: 100 }, (_, i) => view(entry(`p${i}`, { author: `a${i % 10}`, seo: { by: `a${(i + 1) % 10}` }, tags: [] })))
  const { views } = await resolveEntries(roots, 'posts', { depth: 1, fields: null, key: '1' }, context(entries))
  t.equal(entries.reads.length, 1)
  t.equal(views.length, 100)
  t.equal((views[42]?.author as EntryView)._slug, 'a2')
})

t.test('asset URLs off the default environment carry _environment', async t => {
  const entries = new Entries().put('authors', entry('jane', { avatar: '/api/assets/j.png' }), { environment: 'staging', locale: null })
  const root = view(entry('p1', { author: 'jane', seo: { image: '/api/assets/p.png' } }))
  const out = (await resolveEntries([root], 'posts', { depth: 1, fields: null, key: '1' }, context(entries, true, 'staging'))).views[0] as EntryView
  t.equal((out.author as EntryView).avatar, `${PUBLIC}/api/assets/j.png?_environment=staging`)
  t.equal((out.seo as Record<string, unknown>).image, `${PUBLIC}/api/assets/p.png?_environment=staging`)
})

t.test('an unknown root collection only expands asset URLs', async t => {
  const entries = new Entries()
  const { views } = await resolveEntries([view(entry('x', { a: '/api/assets/x.png', author: 'jane' }))], 'nowhere', { depth: 1, fields: null, key: '1' }, context(entries))
  t.equal(views[0]?.a, `${PUBLIC}/api/assets/x.png`)
  t.equal(views[0]?.author, 'jane')
  t.same(entries.reads, [])
})

t.test('leaf texts: the answer spliced from kept texts is byte for byte the answer built whole', async t => {
  const entries = new Entries()
    .put('authors', entry('jane', { name: 'Jané', avatar: '/api/assets/jane.png', best: 'p2', friends: ['joe', 'gone'] }))
    .put('authors', entry('joe', { name: 'Joe "J"' })).put('authors', entry('draft', { name: 'D' }, 'draft'))
    .put('tags', entry('a', { label: 'A' })).put('tags', entry('b', { label: 'B' }))
    .put('posts', entry('p2', { title: 'Two', author: 'joe', related: ['p1'] }))
    .put('posts', entry('p1', { title: 'One', author: 'jane', related: ['p2'] }))
  const roots = [
    view(entry('p1', { title: 'One', author: 'jane', tags: ['b', 'a', 'gone'], seo: { image: '/api/assets/p1.png', by: 'joe' }, related: ['p2', 'p1'] })),
    view(entry('p3', { author: 'draft', tags: [], seo: { by: 'gone' }, related: ['p2'] })),
    view(entry('p4', { author: 'jane' }))
  ]
  const memo = new JsonMemo<StoredEntry>()
  let builds = 0
  const withTexts = (ctx: ResolveContext): ResolveContext => ({
    ...ctx,
    leafJson: (e, plan, build) => memo.json(e, plan, ctx.assets.environmentParam ?? '', () => { builds++; return build() })
  })
  for (const sees of [true, false]) {
    for (const spec of [{ depth: 1, fields: null, key: '1' }, { depth: 2, fields: null, key: '2' }, { depth: 5, fields: null, key: '5' }, { depth: 1, fields: new Set(['seo.by', 'tags']), key: 'seo.by,tags' }]) {
      const whole = await resolveEntries(roots, 'posts', spec, context(entries, sees))
      const parts = await resolveEntries(roots, 'posts', spec, withTexts(context(entries, sees)))
      t.equal(whole.texts.length, 0, 'no placeholders without leafJson')
      if (spec.depth === 1) t.ok(parts.texts.length > 0, 'leaves came as placeholders')
      t.equal(spliceJson(JSON.stringify({ items: parts.views }), parts.texts), JSON.stringify({ items: whole.views }), `depth ${spec.depth}, fields ${spec.key}, drafts ${String(sees)}`)
    }
  }
  const before = builds
  await resolveEntries(roots, 'posts', { depth: 1, fields: null, key: '1' }, withTexts(context(entries)))
  t.equal(builds, before, 'a leaf is built once per stored entry, then its text is kept')
})

t.test('leaf texts: data that looks like a placeholder makes the splice give up', async t => {
  const entries = new Entries().put('authors', entry('jane', { name: '\u00000' }))
  const roots = [view(entry('p1', { title: '\u00000', author: 'jane' }))]
  const ctx: ResolveContext = { ...context(entries), leafJson: (_e, _plan, build) => JSON.stringify(build()) }
  const parts = await resolveEntries(roots, 'posts', { depth: 1, fields: null, key: '1' }, ctx)
  t.equal(spliceJson(JSON.stringify(parts.views), parts.texts), null)
})

t.test('root texts: kept per root while what it embeds stays the same objects', async t => {
  const entries = new Entries()
    .put('authors', entry('jane', { name: 'Jane', best: 'p2' })).put('authors', entry('joe', { name: 'Joe' }))
    .put('authors', entry('hidden', { name: 'H' }, 'draft'))
    .put('posts', entry('p2', { title: 'Two', author: 'joe', related: ['p1'] }))
  const stored = [
    entry('p1', { title: 'Ōne 😀', author: 'jane', tags: [], seo: { by: 'joe' }, related: ['p2'] }),
    entry('p3', { author: 'hidden', related: ['gone', 'p2'] })
  ]
  const roots = stored.map(view)
  const leaves = new JsonMemo<StoredEntry>()
  const kept = new ResolvedTexts()
  let asks = 0
  type Spec = Parameters<typeof resolveEntries>[2]
  const ctxFor = (sees: boolean, spec: Spec): ResolveContext => ({
    ...context(entries, sees),
    leafJson: (e, plan, build) => { asks++; return leaves.json(e, plan, '', build) },
    rootTexts: { entries: stored, kept, variant: `${spec.key}:${String(sees)}`, revision: c => entries.revision(SCOPE, c) }
  })
  const specs: Spec[] = [{ depth: 1, fields: null, key: '1' }, { depth: 3, fields: null, key: '3' }, { depth: 1, fields: new Set(['author']), key: 'author' }]
  const one = specs[0] as Spec
  const matches = async (label: string, sees: boolean, spec: Spec): Promise<void> => {
    const whole = (await resolveEntries(roots, 'posts', spec, context(entries, sees))).views.map(v => JSON.stringify(v))
    const got = await resolveEntries(roots, 'posts', spec, ctxFor(sees, spec))
    t.same(got.rootTexts?.map(text => text.json), whole, `${label}: depth ${spec.depth}, ${spec.key}, drafts ${String(sees)}`)
    t.same(got.rootTexts?.map(text => text.bytes), whole.map(json => Buffer.byteLength(json)), `${label}: UTF-8 lengths`)
    t.same(got.views, [])
  }
  for (const sees of [true, false]) for (const spec of specs) await matches('every request', sees, spec)

  await matches('made', true, one)
  const before = asks
  await matches('kept', true, one)
  t.equal(asks, before, 'kept texts: nothing built, no leaf asked for')
  const change = async (label: string, fn: () => void): Promise<void> => {
    fn()
    const n = asks
    await matches(label, true, one)
    t.ok(asks > n, `${label}: made anew`)
  }
  await change('an embedded entry changed', () => { entries.put('authors', entry('jane', { name: 'Jane Doe', best: 'p2' })) })
  await change('a missing one appeared', () => { entries.put('posts', entry('gone', { title: 'Back' })) })
  await matches('hidden, made for those who do not see drafts', false, one)
  entries.put('authors', entry('hidden', { name: 'H' }))
  await matches('a hidden one was published', false, one)
  t.equal((await entries.getMany(SCOPE, 'authors', ['jane'])).get('jane')?.data.name, 'Jane Doe')

  // A schema change to an embedded collection: its entries are the same objects, their shape is not.
  await matches('made again', true, one)
  const authorsPlan = plans.get('authors') as ReferencePlan
  t.teardown(() => { plans.set('authors', authorsPlan) })
  await change('an embedded collection\'s schema changed', () => {
    plans.set('authors', compilePlan({ ...schemas.authors, best: { field_type: 'reference', collection: 'posts', multiple: true } }))
  })
  const p1 = (await resolveEntries(roots, 'posts', one, ctxFor(true, one))).rootTexts?.[0]?.json ?? ''
  t.match(JSON.parse(p1), { author: { _slug: 'jane', best: ['p2'] } }, 'formatted by the new schema')

  const nul = [entry('n', { title: '\u00000', author: 'joe' })]
  const none = await resolveEntries(nul.map(view), 'posts', one, {
    ...context(entries), leafJson: (_e, _plan, build) => JSON.stringify(build()), rootTexts: { entries: nul, kept, variant: 'x', revision: c => entries.revision(SCOPE, c) }
  })
  t.equal(none.rootTexts, null, 'a placeholder look-alike: no root texts, the caller builds whole')
})

t.test('resolveRootTexts: kept texts that hold are used without a read; only the other roots are resolved', async t => {
  const entries = new Entries()
    .put('authors', entry('jane', { name: 'Jane' })).put('authors', entry('joe', { name: 'Joe' }))
    .put('authors', entry('idle', { name: 'Idle' })).put('tags', entry('a', { label: 'A' }))
  const stored = [
    entry('p1', { title: 'One', author: 'jane', tags: ['a'] }),
    entry('p2', { title: 'Two', author: 'joe', seo: { by: 'gone' } }),
    entry('p3', { title: 'Three' }),
    entry('p4', { title: 'Four', related: ['p4'] })
  ]
  const leaves = new JsonMemo<StoredEntry>()
  const kept = new ResolvedTexts()
  const one = { depth: 1, fields: null, key: '1' }
  let viewed: string[] = []
  let builds = 0
  const run = async (roots: StoredEntry[]): ReturnType<typeof resolveRootTexts> => await resolveRootTexts(roots, e => { viewed.push(e.slug); return view(e) }, 'posts', one, {
    ...context(entries),
    leafJson: (e, plan, build) => leaves.json(e, plan, '', () => { builds++; return build() }),
    rootTexts: { kept, variant: '1', revision: c => entries.revision(SCOPE, c) }
  })
  const check = async (label: string, roots: StoredEntry[], expect: { reads: string[], viewed: string[] }): Promise<void> => {
    entries.reads.length = 0
    viewed = []
    const got = await run(roots)
    t.same(entries.reads, expect.reads, `${label}: reads`)
    t.same(viewed, expect.viewed, `${label}: views made`)
    const whole = await resolveEntries(roots.map(view), 'posts', one, context(entries))
    t.same(got?.texts.map(text => text.json), whole.views.map(v => JSON.stringify(v)), `${label}: the texts are the answer built whole`)
    t.same([...got?.collections ?? []].sort(), [...whole.collections].sort(), `${label}: the collections it embeds from`)
  }

  await check('first read: every root resolved', stored, { reads: ['authors:gone,jane,joe', 'tags:a', 'posts:p4'], viewed: ['p1', 'p2', 'p3', 'p4'] })
  await check('again: nothing read, no view made', stored, { reads: [], viewed: [] })

  // A write to an entry no root embeds: the texts that embed from its collection are checked
  // entry by entry (a read), found current, kept, and hold without a read again after.
  let before = builds
  entries.put('authors', entry('idle', { name: 'Idle 2' }))
  await check('an unrelated write to an embedded collection', stored, { reads: ['authors:gone,jane,joe', 'tags:a'], viewed: ['p1', 'p2'] })
  t.equal(builds, before, 'found current: nothing built')
  await check('and then', stored, { reads: [], viewed: [] })

  // A write to an embedded entry: the root embedding it is made anew, with the new entry.
  entries.put('authors', entry('joe', { name: 'Joseph' }))
  await check('an embedded entry changed', stored, { reads: ['authors:gone,jane,joe', 'tags:a'], viewed: ['p1', 'p2'] })
  t.match(JSON.parse((await run(stored))?.texts[1]?.json ?? ''), { author: { name: 'Joseph' }, seo: { by: null } })

  // A missing target appears: a write to its collection.
  entries.put('authors', entry('gone', { name: 'Back' }))
  await check('a missing entry appeared', stored, { reads: ['authors:gone,jane,joe', 'tags:a'], viewed: ['p1', 'p2'] })
  t.match(JSON.parse((await run(stored))?.texts[1]?.json ?? ''), { seo: { by: { _slug: 'gone', name: 'Back' } } })

  // A root written anew is a new object: it alone is resolved.
  const p3 = entry('p3', { title: 'Three', author: 'jane' })
  const next = [stored[0], stored[1], p3, stored[3]] as StoredEntry[]
  await check('a root changed', next, { reads: ['authors:jane'], viewed: ['p3'] })
  await check('and then', next, { reads: [], viewed: [] })

  // A schema change, with no write: the plans are checked too.
  const authorsPlan = plans.get('authors') as ReferencePlan
  t.teardown(() => { plans.set('authors', authorsPlan) })
  before = builds
  plans.set('authors', compilePlan({ ...schemas.authors, name: { field_type: 'reference', collection: 'authors' } }))
  await check('an embedded collection\'s schema changed', next, { reads: ['authors:gone,jane,joe', 'tags:a', 'posts:p4'], viewed: ['p1', 'p2', 'p3', 'p4'] })
  t.ok(builds > before, 'made anew')

  const nul = [entry('n', { title: '\u00000', author: 'joe' })]
  t.equal(await run(nul), null, 'a placeholder look-alike: null, the caller builds whole')
})

t.test('resolveRootTexts: a write in another locale or environment leaves the texts kept', async t => {
  const de = { environment: 'default', locale: 'de' }
  const entries = new Entries()
    .put('authors', entry('jane', { name: 'Jane' })).put('authors', entry('jane', { name: 'Johanna' }), de)
  const stored = [entry('p1', { title: 'Eins', author: 'jane' })]
  const kept = new ResolvedTexts()
  const leaves = new JsonMemo<StoredEntry>()
  const run = async (): Promise<string | undefined> => (await resolveRootTexts(stored, view, 'posts', { depth: 1, fields: null, key: '1' }, {
    ...context(entries),
    scope: de,
    leafJson: (e, plan, build) => leaves.json(e, plan, '', build),
    rootTexts: { kept, variant: '1', revision: c => entries.revision(de, c) }
  }))?.texts[0]?.json
  t.match(JSON.parse(await run() ?? ''), { author: { name: 'Johanna' } }, 'read in its own locale')
  entries.reads.length = 0
  entries.put('authors', entry('jane', { name: 'Jane Doe' }))
  entries.put('authors', entry('jane', { name: 'Jane' }), { environment: 'staging', locale: 'de' })
  t.match(JSON.parse(await run() ?? ''), { author: { name: 'Johanna' } })
  t.same(entries.reads, [], 'writes elsewhere: kept, nothing read')
  entries.put('authors', entry('jane', { name: 'Hanna' }), de)
  t.match(JSON.parse(await run() ?? ''), { author: { name: 'Hanna' } }, 'a write in its locale: made anew')
  t.same(entries.reads, ['authors:jane'])
})
