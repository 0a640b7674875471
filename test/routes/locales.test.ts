import t from 'tap'
import { assertShape, build } from '../helper.js'
import { LocalesReply } from '../../routes/api/locales/schemas.js'

t.test('GET /api/locales without locales: an empty list and a null default', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/api/locales' })
  t.equal(res.statusCode, 200)
  assertShape(t, LocalesReply, res.json())
  t.strictSame(res.json(), { locales: [], default: null })
})

t.test('GET /api/locales lists CMS_LOCALES in order; the first is the default', async t => {
  const app = await build(t, { CMS_LOCALES: 'en, de,fr-CA' })
  const res = await app.inject({ method: 'GET', url: '/api/locales' })
  t.equal(res.statusCode, 200)
  assertShape(t, LocalesReply, res.json())
  t.strictSame(res.json(), { locales: ['en', 'de', 'fr-CA'], default: 'en' })
})
