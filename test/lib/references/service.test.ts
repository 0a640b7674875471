// The reference service's reverse index while the stored entries are read asynchronously: a
// re-index after a schema change keeps the writes made while it reads, and referrers() waits for it.
import t from 'tap'
import { ReferenceService } from '../../../lib/references/service.js'
import type { EntryChange } from '../../../lib/content/service.js'
import type { CollectionModel, FieldDefinition, SchemaRegistry } from '../../../types/schema.js'
import type { StoredLocation } from '../../../types/store.js'
import { Entries, SCOPE, entry } from './fakes.js'

const model = (name: string, fields: Record<string, FieldDefinition>): CollectionModel =>
  ({ schema: { name, fields, reusable: false, strict: false, extends: null } } as unknown as CollectionModel)

t.test('a re-index keeps the writes made while it reads the stored entries; referrers() waits for it', async t => {
  const models = new Map<string, CollectionModel>([
    ['authors', model('authors', { name: { field_type: 'string' } })],
    ['posts', model('posts', { author: { field_type: 'string' } })]
  ])
  const registry: Pick<SchemaRegistry, 'collection' | 'collections'> = {
    collection: name => models.get(name) ?? null,
    collections: () => [...models.values()]
  }
  const stored = new Entries().put('authors', entry('jane', { name: 'Jane' })).put('posts', entry('p1', { author: 'jane' }))
  const all = async (): Promise<StoredLocation[]> => {
    const out: StoredLocation[] = []
    for await (const location of stored.entries()) out.push(location)
    return out
  }
  // A slow read: what `before` holds (the entries as a read saw them, before a later write), once `gate` opens.
  let before: StoredLocation[] | null = null
  let gate: Promise<void> = Promise.resolve()
  const store = {
    getMany: stored.getMany,
    revision: stored.revision,
    async * entries (): AsyncIterable<StoredLocation> {
      const read = before ?? await all()
      await gate
      yield * read
    }
  }
  const service = new ReferenceService({ registry, store, publicUrl: 'http://cms.test', environments: [], defaultEnvironment: 'default' })
  let changes = 0
  service.useIndex(await service.buildIndex(), () => { changes++ })
  const referrers = async (): Promise<string[]> => (await service.referrers('authors', 'jane')).map(r => `${r.collection}/${r.slug}.${r.field}`)
  t.same(await referrers(), [], 'posts.author is a plain string')

  models.set('posts', model('posts', { author: { field_type: 'reference', collection: 'authors' } }))
  let open!: () => void
  gate = new Promise(resolve => { open = resolve })
  before = await all()
  const reindexing = service.schemasChanged()
  const answered = referrers()
  const p2 = entry('p2', { author: 'jane' })
  stored.put('posts', p2)
  const change: EntryChange = { operation: 'create', scope: SCOPE, collection: 'posts', model: models.get('posts') as CollectionModel, slug: 'p2', entry: p2, previous: null }
  service.updateIndex(change)
  open()
  t.equal(await reindexing, true, 'the index changed')
  t.same(await answered, ['posts/p1.author', 'posts/p2.author'], 'referrers() asked during the re-index answers after it')
  t.same(await referrers(), ['posts/p1.author', 'posts/p2.author'], 'the write made meanwhile is kept')
  t.ok(changes >= 2, 'each change was announced (to save the index)')
  t.equal(await service.schemasChanged(), false, 'nothing changed since')
})
