// Concurrent writes to one entry on two server processes sharing one PostgreSQL database (contract
// §12: every rule holds across replicas as on one process). A PATCH merges into the entry as
// stored, and a draft publish removes the draft it publishes: on one process the entry's lock
// orders them; across processes each update names what it read (EntryInput.expected), the store
// refuses it when another replica wrote in between, and the pipeline runs it again from its reads.
// Without that, racing PATCHes lost one another's changes, and a draft saved on one replica while
// another published was deleted unpublished.
import t from 'tap'
import { START_MS, request, startCluster, startPostgres, type Answer, type Replica } from './cluster.js'

t.setTimeout(120_000 + 2 * START_MS)

/** `marks` is a json field: a merge patch sets one key of it and keeps the others. */
const NOTES = { name: 'notes', fields: { title: { field_type: 'string' }, marks: { field_type: 'json' } } }
const PATCHES = 40
const PUBLISH_ROUNDS = 30

t.test('two replicas: concurrent writes to one entry lose nothing', async t => {
  const pg = await startPostgres(t)
  const { replicas } = await startCluster(t, pg.url, 2, { schemas: [NOTES] })
  const on = (i: number): Replica => replicas[i % replicas.length] as Replica

  await t.test(`${PATCHES} concurrent PATCHes of one entry spread over both replicas: every change is kept`, async t => {
    t.equal((await request(on(0).base, 'POST', '/api/content/notes', { _slug: 'n', title: 'N', marks: {} })).status, 201)
    const answers = await Promise.all(Array.from({ length: PATCHES }, async (_, i): Promise<Answer> =>
      await request(on(i).base, 'PATCH', '/api/content/notes/n', { marks: { [`k${i}`]: i } })))
    t.same(answers.map(a => a.status), answers.map(() => 200), 'every PATCH answered 200', { bodies: answers.filter(a => a.status !== 200).map(a => a.body) })
    const expected = Object.fromEntries(Array.from({ length: PATCHES }, (_, i) => [`k${i}`, i]))
    for (const r of replicas) {
      const marks = (await request(r.base, 'GET', '/api/content/notes/n')).body?.marks as Record<string, number>
      const lost = Object.keys(expected).filter(k => marks[k] === undefined)
      t.same(lost, [], `${r.base}: no change lost`)
      t.same(marks, expected)
    }
    const versions = await request(on(1).base, 'GET', '/api/content/notes/n/versions?_per_page=1')
    t.equal(versions.body?.total, PATCHES + 1, 'one version per answered write')
  })

  await t.test('a draft saved on one replica while the other publishes is published or still pending, never lost', async t => {
    t.equal((await request(on(0).base, 'POST', '/api/content/notes', { _slug: 'd', title: 'live' })).status, 201)
    const lost: string[] = []
    for (let round = 0; round < PUBLISH_ROUNDS; round++) {
      const first = `r${round}-first`
      const second = `r${round}-second`
      t.equal((await request(on(1).base, 'PUT', '/api/content/notes/d/draft', { title: first })).status, 200)
      // The publish (replica 0) reads the first draft; the second is saved (replica 1) as it does.
      const [published, saved] = await Promise.all([
        request(on(0).base, 'POST', '/api/content/notes/d/draft/publish'),
        request(on(1).base, 'PUT', '/api/content/notes/d/draft', { title: second })
      ])
      t.equal(saved.status, 200)
      t.equal(published.status, 200)
      const live = (await request(on(0).base, 'GET', '/api/content/notes/d')).body?.title
      const pending = await request(on(1).base, 'GET', '/api/content/notes/d/draft')
      // Either the publish came first (the second draft is pending) or it published the second one.
      if (!(pending.status === 200 && pending.body?.title === second) && live !== second) lost.push(`${round}: live ${String(live)}, draft ${pending.status}`)
      if (pending.status === 200) t.equal((await request(on(0).base, 'DELETE', '/api/content/notes/d/draft')).status, 204)
    }
    t.same(lost, [], 'no draft saved during a publish was removed unpublished')
  })
})
