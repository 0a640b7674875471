import t from 'tap'
import { assertShape, build, KEYS_ENV } from '../helper.js'
import { EnvironmentsReply } from '../../routes/api/environments/schemas.js'

t.test('GET /api/environments without environments: the one default environment', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/api/environments' })
  t.equal(res.statusCode, 200)
  assertShape(t, EnvironmentsReply, res.json())
  t.strictSame(res.json(), { environments: ['default'], default: 'default' })
})

t.test('GET /api/environments lists CMS_ENVIRONMENTS in order; the first is the default; no key needed, like /api/locales', async t => {
  const app = await build(t, { CMS_ENVIRONMENTS: 'production, staging,preview', ...KEYS_ENV })
  for (const url of ['/api/environments', '/api/locales']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200, url)
  }
  const res = await app.inject({ method: 'GET', url: '/api/environments' })
  assertShape(t, EnvironmentsReply, res.json())
  t.strictSame(res.json(), { environments: ['production', 'staging', 'preview'], default: 'production' })
})
