import t from 'tap'
import { assetUrlBase, expandAssetUrls, relativizeAssetUrls } from '../../../lib/references/asset-urls.js'
import { deepFreeze } from './fakes.js'

const PUBLIC = 'https://cms.example.com'

t.test('relativizeAssetUrls: absolute asset URLs under the public URL become relative, at any depth', async t => {
  const data = deepFreeze({
    image: `${PUBLIC}/api/assets/a.png`,
    other: 'https://elsewhere.example.com/api/assets/b.png',
    text: `see ${PUBLIC}/api/assets/c.png`,
    notAsset: `${PUBLIC}/api/content/posts`,
    gallery: [`${PUBLIC}/api/assets/d.png`, { src: `${PUBLIC}/api/assets/nested/e.png`, n: 1 }, null, 3],
    seo: { og: { image: `${PUBLIC}/api/assets/f.jpg?w=10` } },
    flag: true
  })
  t.same(relativizeAssetUrls(data, PUBLIC, 'default'), {
    image: '/api/assets/a.png',
    other: 'https://elsewhere.example.com/api/assets/b.png',
    text: `see ${PUBLIC}/api/assets/c.png`,
    notAsset: `${PUBLIC}/api/content/posts`,
    gallery: ['/api/assets/d.png', { src: '/api/assets/nested/e.png', n: 1 }, null, 3],
    seo: { og: { image: '/api/assets/f.jpg?w=10' } },
    flag: true
  })
  const plain = deepFreeze({ a: 'x', b: [1, 'y'], c: { d: null } })
  t.equal(relativizeAssetUrls(plain, PUBLIC, 'default'), plain, 'nothing to change: the same object')
})

t.test('relativizeAssetUrls drops the _environment parameter a read added for this environment', async t => {
  const data = {
    a: `${PUBLIC}/api/assets/a.png?_environment=staging`,
    b: `${PUBLIC}/api/assets/b.png?w=1&_environment=staging`,
    c: `${PUBLIC}/api/assets/c.png?_environment=other`
  }
  t.same(relativizeAssetUrls(data, PUBLIC, 'staging'), {
    a: '/api/assets/a.png',
    b: '/api/assets/b.png?w=1',
    c: '/api/assets/c.png?_environment=other'
  })
})

t.test('a public URL with a path prefix', async t => {
  t.same(relativizeAssetUrls({ a: 'http://h/cms/api/assets/x.png', b: 'http://h/api/assets/y.png' }, 'http://h/cms', 'default'),
    { a: '/api/assets/x.png', b: 'http://h/api/assets/y.png' })
})

t.test('expandAssetUrls: relative asset paths become absolute, with _environment off the default environment', async t => {
  const data = deepFreeze({ a: '/api/assets/a.png', list: ['/api/assets/b.png', 'x'], o: { p: '/api/assets/c.png?w=2' }, t: 'text /api/assets/d.png' })
  const base = assetUrlBase(PUBLIC, [], 'default')
  t.same(expandAssetUrls(data, base), {
    a: `${PUBLIC}/api/assets/a.png`,
    list: [`${PUBLIC}/api/assets/b.png`, 'x'],
    o: { p: `${PUBLIC}/api/assets/c.png?w=2` },
    t: 'text /api/assets/d.png'
  })
  t.same(expandAssetUrls(data, assetUrlBase(PUBLIC, ['main', 'staging'], 'main')).a, `${PUBLIC}/api/assets/a.png`, 'the default environment: no parameter')
  const staging = assetUrlBase(PUBLIC, ['main', 'staging'], 'staging')
  const out = expandAssetUrls(data, staging)
  t.equal(out.a, `${PUBLIC}/api/assets/a.png?_environment=staging`)
  t.equal(out.o.p, `${PUBLIC}/api/assets/c.png?w=2&_environment=staging`)
  t.equal(expandAssetUrls('/api/assets/x.png?_environment=main', staging), `${PUBLIC}/api/assets/x.png?_environment=main`, 'an explicit parameter is kept')
  const none = deepFreeze({ a: 'x', b: [1] })
  t.equal(expandAssetUrls(none, base), none, 'nothing to change: the same object')

  // A round trip: what a read expands, a write makes relative again.
  t.same(relativizeAssetUrls(out as Record<string, unknown>, PUBLIC, 'staging'), data)
})
