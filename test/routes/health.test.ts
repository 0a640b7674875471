import t from 'tap'
import { assertShape, assertError, build } from '../helper.js'
import { HealthReply } from '../../routes/health/index.js'

t.test('GET /health answers ok', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/health' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok' })
  assertShape(t, HealthReply, res.json())
})

t.test('an unknown route answers 404 in the contract shape', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/nope' })
  assertError(t, res, 404, 'NOT_FOUND')
})
