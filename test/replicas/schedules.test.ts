// Scheduled actions on two server processes sharing one PostgreSQL database (contract §12 and
// §13): schedules made on either replica, all due at once, each run exactly once by one of them,
// counted by the webhook deliveries of their changes (one `content.updated` per entry and action).
import t from 'tap'
import { receiver, until } from '../lib/webhooks/receiver.js'
import { START_MS, request, startCluster, startPostgres, type Replica } from './cluster.js'

t.setTimeout(120_000 + 2 * START_MS)

const POSTS = { name: 'posts', fields: { title: { field_type: 'string', required: true } } }
/** Room to make every schedule before their common time comes, on a loaded machine. */
const LEAD_MS = 4000
const ENTRIES = 16

t.test('two replicas: several schedules due at once each run exactly once', async t => {
  const pg = await startPostgres(t)
  const hooks = await receiver(t)
  const { replicas } = await startCluster(t, pg.url, 2, { schemas: [POSTS], env: { CMS_WEBHOOKS: hooks.url, CMS_WEBHOOK_BACKOFF_MS: '10' } })
  const on = (i: number): Replica => replicas[i % replicas.length] as Replica
  const slugs = Array.from({ length: ENTRIES }, (_, i) => `s${i}`)
  for (const [i, slug] of slugs.entries()) {
    t.equal((await request(on(i).base, 'POST', '/api/content/posts', { _slug: slug, _status: 'draft', title: slug })).status, 201)
  }

  const at = new Date(Date.now() + LEAD_MS).toISOString()
  for (const [i, slug] of slugs.entries()) {
    // Made on one replica and run by whichever claims it first.
    const made = await request(on(i + 1).base, 'POST', `/api/content/posts/${slug}/schedule`, { action: 'publish', at })
    t.equal(made.status, 201, `publish of ${slug} scheduled`)
  }
  const pending = await request(on(0).base, 'GET', '/api/schedules?_per_page=100')
  t.equal(pending.body?.total, ENTRIES, 'every schedule listed on either replica')

  const published = (): Array<Record<string, unknown>> => hooks.received.map(r => r.body)
    .filter(b => b.event === 'content.updated' && b.status === 'published' && b.previous_status === 'draft')
  await until(() => slugs.every(s => published().some(b => b.slug === s)), 30_000, 'every entry published')
  for (const slug of slugs) {
    const answer = await request(on(0).base, 'GET', `/api/content/posts/${slug}`)
    t.equal(answer.body?._status, 'published', `${slug} published`)
  }
  for (const r of replicas) {
    t.equal((await request(r.base, 'GET', '/api/schedules')).body?.total, 0, 'none left pending')
    t.equal((await request(r.base, 'GET', '/api/schedules?status=failed')).body?.total, 0, 'none failed')
  }
  // A sentinel write after them: once its delivery arrives, any second run's would have too.
  t.equal((await request(on(1).base, 'PATCH', '/api/content/posts/s0', { title: 'sentinel' })).status, 200)
  await until(() => hooks.received.some(r => r.body.event === 'content.updated' && r.body.slug === 's0' && r.body.status === 'published' && r.body.previous_status === 'published'), 15_000, 'the sentinel')
  const counts = new Map<string, number>()
  for (const b of published()) counts.set(String(b.slug), (counts.get(String(b.slug)) ?? 0) + 1)
  t.same([...counts].filter(([, n]) => n !== 1), [], 'each published once')
  t.equal(counts.size, ENTRIES)
})
