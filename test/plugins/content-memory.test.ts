// Bounded memory (CMS_TEXT_CACHE_BYTES, CMS_BODY_POOL_BYTES) in the app, on both stores: the
// texts kept per stored entry, plain and resolved, stay within their setting however many
// entries are read, and every answer is the one made with no text kept at all.
import t from 'tap'
import { BodyPool } from '../../lib/content/body-pool.js'
import { eachStore } from '../helper.js'
import { seed, setup } from '../lib/references/app-fixture.js'

const POSTS = 40
const TEXT_BYTES = 12_000

const URLS = [
  ...[1, 2, 3, 4].map(page => `/api/content/posts?_per_page=10&_page=${page}`),
  ...[1, 2, 3, 4].map(page => `/api/content/posts?_per_page=10&_page=${page}&_resolve=1`),
  '/api/content/posts?_per_page=40&_resolve=2&_sort=-_slug',
  '/api/content/posts/post-07', '/api/content/posts/post-07?_resolve=1', '/api/content/authors?_resolve=1'
]

eachStore(t, async (t, store, env) => {
  t.test('kept texts within CMS_TEXT_CACHE_BYTES: never over it, and every answer the one made without texts', async t => {
    // With no text kept, every answer is serialized whole: the reference.
    const plain = await setup(t, { ...env, CMS_CACHE_MAX: '0', CMS_TEXT_CACHE_BYTES: '0' }, { keepOpen: true })
    await seed(t, plain)
    for (let i = 0; i < POSTS; i++) {
      await plain.create(t, 'posts', { _slug: `post-${String(i).padStart(2, '0')}`, title: `Post ${i} ${'é'.repeat(i)}`, author: i % 3 === 0 ? 'joe' : 'jane', tags: ['news'] })
    }
    const expected = new Map<string, string>()
    for (const url of URLS) expected.set(url, (await plain.get(url)).body)
    t.equal(plain.app.references.texts.count, 0, 'CMS_TEXT_CACHE_BYTES=0 keeps nothing')
    await plain.app.close()

    const c = await setup(t, { ...env, CMS_CACHE_MAX: '0', CMS_TEXT_CACHE_BYTES: String(TEXT_BYTES) }, { dataDir: plain.dataDir })
    const texts = c.app.references.texts
    t.equal(texts.maxBytes, TEXT_BYTES)
    let most = 0
    // Forward, backward, forward: texts are made, let go and made again.
    for (const url of [...URLS, ...[...URLS].reverse(), ...URLS]) {
      const res = await c.get(url)
      t.equal(res.statusCode, 200)
      if (res.body !== expected.get(url)) t.fail(`${url}: not the answer made without texts`)
      if (texts.bytes > TEXT_BYTES) t.fail(`${url}: ${texts.bytes} bytes of texts kept`)
      most = Math.max(most, texts.bytes)
    }
    // Texts are kept per stored entry; the PostgreSQL store reads every entry afresh (another
    // process may have written it), so there only the bound and the answers are checked.
    if (store !== 'postgres') {
      t.ok(most > TEXT_BYTES / 2, `texts were kept up to the bound (${most} bytes at most)`)
      t.ok(texts.count > 0, `${texts.count} texts kept at the end`)
    }
  })

  t.test('CMS_BODY_POOL_BYTES: 0 pools no body; the default pools a large page the cache does not keep', async t => {
    let lent = 0
    const { alloc } = BodyPool.prototype
    t.teardown(() => { BodyPool.prototype.alloc = alloc })
    BodyPool.prototype.alloc = function (this: BodyPool, bytes: number) {
      const body = alloc.call(this, bytes)
      if (body !== null) lent++
      return body
    }
    for (const pool of ['0', undefined]) {
      const c = await setup(t, { ...env, CMS_CACHE_MAX: '0', ...(pool === undefined ? {} : { CMS_BODY_POOL_BYTES: pool }) })
      // Past Node's own threshold (half Buffer.poolSize: 4 KB on Node 20, 32 KB on Node 24).
      const label = 'x'.repeat(Buffer.poolSize >>> 3)
      for (let i = 0; i < 8; i++) await c.create(t, 'tags', { _slug: `tag-${i}`, label })
      lent = 0
      const res = await c.get('/api/content/tags?_per_page=8')
      t.equal(res.statusCode, 200)
      t.ok(res.body.length > Buffer.poolSize, 'a page over Buffer.poolSize')
      t.equal(res.json().items.length, 8)
      t.equal(lent, pool === '0' ? 0 : 1, pool === '0' ? 'CMS_BODY_POOL_BYTES=0: not pooled' : 'by default: pooled')
    }
  })
})
