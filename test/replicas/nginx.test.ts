// Two replicas on one PostgreSQL database behind a real nginx (Debian's, installed by
// scripts/ensure-nginx.sh) running the config the compose file ships, deploy/nginx/lectern.conf
// (issue 23, contract §12): reads through the proxy see every write within 1 s, cached lists and
// entries included; X-Forwarded-* set by nginx is what the replicas take for the request's host and
// address (CMS_TRUST_PROXY=true), and a client cannot choose its own; nginx's own errors are in the
// error envelope.
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { until } from '../lib/webhooks/receiver.js'
import { START_MS, request, startCluster, startNginx, startPostgres, type Answer, type Nginx } from './cluster.js'

// Room for the replicas' start on a loaded machine, besides the checks themselves.
t.setTimeout(120_000 + 2 * START_MS)

const POSTS = { name: 'posts', fields: { title: { field_type: 'string', required: true } } }
const FRESH_MS = 1000

interface Read { upstream: string, status: number, body: Record<string, unknown> }

/** The replica that answered through nginx (the last one it tried). */
const upstreamOf = (answer: Answer): string => (answer.headers.get('x-upstream') ?? '').split(', ').at(-1) ?? ''

/** One GET through nginx, with the replica that answered it. */
async function read (nginx: Nginx, url: string): Promise<Read> {
  const answer = await request(nginx.base, 'GET', url)
  return { upstream: upstreamOf(answer), status: answer.status, body: answer.body ?? {} }
}

const ENTRY = '/api/content/posts/p1'
const LIST = '/api/content/posts?_sort=-_updated_at&_per_page=50'

/** What the entry and the list must show once a write is seen: the entry's title (null: deleted) and the list's slugs. */
interface Expect { title: string | null, slugs: string[] }

function fresh (kind: 'entry' | 'list', r: Read, want: Expect): boolean {
  if (kind === 'entry') return want.title === null ? r.status === 404 : r.status === 200 && r.body.title === want.title
  const slugs = ((r.body.items ?? []) as Array<{ _slug: string }>).map(i => i._slug).sort()
  return r.status === 200 && JSON.stringify(slugs) === JSON.stringify([...want.slugs].sort())
}

/**
 * Reads through nginx (entry and list, each from every replica: nginx takes turns) until all show
 * `want`, and fails unless they all do within 1 s of the write's answer; the replica that wrote
 * shows it at once, and once a read from a replica is fresh none after it is stale.
 */
async function seenEverywhere (t: Test, nginx: Nginx, upstreams: string[], writer: string, ackedAt: number, want: Expect): Promise<void> {
  const seen = new Map<string, number>()
  const combos = upstreams.length * 2
  for (let step = 0; seen.size < combos || step % 4 !== 0; step++) {
    const kind = Math.floor(step / 2) % 2 === 0 ? 'entry' : 'list'
    const r = await read(nginx, kind === 'entry' ? ENTRY : LIST)
    const key = `${kind} from ${r.upstream}`
    const ok = fresh(kind, r, want)
    if (ok && !seen.has(key)) seen.set(key, performance.now() - ackedAt)
    if (!ok && (seen.has(key) || r.upstream === writer)) {
      t.fail(`${key}: stale after ${seen.has(key) ? 'a fresh read' : 'its own write'}`, { want, got: r.body })
      return
    }
    if (performance.now() - ackedAt > FRESH_MS + 500) break
  }
  const slowest = seen.size < combos ? Infinity : Math.max(...seen.values())
  t.equal(seen.size, combos, 'every replica showed the write, entry and list', { seen: Object.fromEntries(seen) })
  t.ok(slowest <= FRESH_MS, `seen everywhere within ${FRESH_MS} ms (slowest: ${Math.round(slowest)} ms)`)
}

async function write (nginx: Nginx, method: string, url: string, body?: object): Promise<{ status: number, upstream: string, ackedAt: number }> {
  const answer = await request(nginx.base, method, url, body)
  return { status: answer.status, upstream: upstreamOf(answer), ackedAt: answer.at }
}

/** A GET through nginx from the local address `from`, with the given headers; the answer's status. */
async function getFrom (nginx: Nginx, from: string, url: string, headers: Record<string, string>): Promise<number> {
  return await new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: nginx.port, path: url, localAddress: from, headers }, res => {
      res.resume()
      res.on('end', () => { resolve(res.statusCode ?? 0) })
    })
    req.on('error', reject)
  })
}

t.test('two replicas behind nginx', async t => {
  const pg = await startPostgres(t)
  const cluster = await startCluster(t, pg.url, 2, { schemas: [POSTS], env: { CMS_TRUST_PROXY: 'true' } })
  const { replicas } = cluster
  const nginx = await startNginx(t, replicas.map(r => r.port))
  const upstreams = replicas.map(r => `127.0.0.1:${r.port}`)

  await t.test('reads through the proxy see every write within 1 s, cached lists and entries included', async t => {
    t.equal((await write(nginx, 'POST', '/api/content/posts', { _slug: 'p1', title: 'v0' })).status, 201)
    const slugs = ['p1']
    // Both replicas answer the entry and the list once before each write, so both have them cached.
    for (let round = 1; round <= 3; round++) {
      for (let i = 0; i < 4; i++) t.equal((await read(nginx, i < 2 ? ENTRY : LIST)).status, 200)
      const put = await write(nginx, 'PUT', ENTRY, { title: `v${round}` })
      t.equal(put.status, 200, `PUT ${round}`)
      await seenEverywhere(t, nginx, upstreams, put.upstream, put.ackedAt, { title: `v${round}`, slugs })
      const slug = `new-${round}`
      const post = await write(nginx, 'POST', '/api/content/posts', { _slug: slug, title: slug })
      t.equal(post.status, 201, `POST ${round}`)
      slugs.push(slug)
      await seenEverywhere(t, nginx, upstreams, post.upstream, post.ackedAt, { title: `v${round}`, slugs })
    }
    const del = await write(nginx, 'DELETE', ENTRY)
    t.equal(del.status, 204)
    await seenEverywhere(t, nginx, upstreams, del.upstream, del.ackedAt, { title: null, slugs: slugs.slice(1) })
  })

  await t.test('X-Forwarded-* from nginx is what the replicas take for the host and the client address', async t => {
    // The client connects from 127.0.0.2 (nginx connects to the replicas from 127.0.0.1), asks for
    // a host of its own and claims another address, which nginx replaces.
    const probe = randomUUID()
    const status = await getFrom(nginx, '127.0.0.2', `/api/collections?probe=${probe}`, {
      host: 'cms.example.test:8443',
      'x-forwarded-for': '198.51.100.7'
    })
    t.equal(status, 200)
    const line = await untilLogged(replicas.map(r => r.process.output), probe)
    t.equal(line.req.host, 'cms.example.test:8443', 'the host is X-Forwarded-Host')
    t.equal(line.req.remoteAddress, '127.0.0.2', "the address is the client's, as nginx saw it")
  })

  await t.test('nginx answers its own errors in the envelope', async t => {
    const tooLarge = await new Promise<{ status: number, body: string }>((resolve, reject) => {
      // Declared over client_max_body_size: nginx refuses it before reading any of it.
      const req = http.request({ host: '127.0.0.1', port: nginx.port, path: '/api/assets', method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(60 * 1024 * 1024) } }, res => {
        let body = ''
        res.on('data', (d: Buffer) => { body += d.toString() })
        res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
      })
      req.on('error', reject)
      req.flushHeaders()
    })
    t.equal(tooLarge.status, 413)
    t.match(JSON.parse(tooLarge.body), { statusCode: 413, code: 'PAYLOAD_TOO_LARGE' })

    for (const r of replicas) r.process.child.kill('SIGKILL')
    await Promise.all(replicas.map(async r => await r.process.exited))
    const res = await fetch(nginx.base + '/api/content/posts')
    t.equal(res.status, 503)
    t.match(await res.json(), { statusCode: 503, code: 'UNAVAILABLE', error: 'Service Unavailable' })
  })
})

interface LogLine { msg: string, req: { url: string, host: string, remoteAddress: string } }

/** The "incoming request" line whose URL has `probe`, from whichever replica logged it. */
async function untilLogged (outputs: Array<() => string>, probe: string): Promise<LogLine> {
  return await until(() => {
    for (const output of outputs) {
      const text = output().split('\n').find(l => l.includes(probe) && l.includes('incoming request'))
      if (text !== undefined) return JSON.parse(text) as LogLine
    }
    return undefined
  }, 5000, 'the request in a replica log')
}
