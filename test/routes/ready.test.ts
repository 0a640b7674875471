import { renameSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { assertError, assertShape, build, eachStore, tempDir } from '../helper.js'
import { ReadyReply } from '../../routes/ready/index.js'

t.test('GET /ready: 200 while the store answers, 503 UNAVAILABLE while it does not (contract §12)', async t => {
  eachStore(t, async (t, store, env) => {
    const dataDir = path.join(tempDir(t), 'data')
    const app = await build(t, env, { dataDir })
    const res = await app.inject({ method: 'GET', url: '/ready' })
    t.equal(res.statusCode, 200)
    t.same(res.json(), { status: 'ready' })
    assertShape(t, ReadyReply, res.json())
    t.equal(res.headers['cache-control'], 'no-store', 'never cached by a proxy')

    // The store cannot answer: its reason is logged, not sent.
    const ping = app.store.ping.bind(app.store)
    app.store.ping = async () => { throw new Error(`disk gone under ${dataDir}`) }
    const down = await app.inject({ method: 'GET', url: '/ready' })
    assertError(t, down, 503, 'UNAVAILABLE')
    t.notMatch(down.body, dataDir, 'no path in the answer')
    t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200, '/health stays a liveness check')
    app.store.ping = ping
    t.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200, 'ready again once it answers')

    if (store === 'file') {
      // A data folder gone from under the server (a lost volume) is not ready, for real.
      renameSync(path.join(dataDir, 'content'), path.join(dataDir, 'content-moved'))
      assertError(t, await app.inject({ method: 'GET', url: '/ready' }), 503, 'UNAVAILABLE')
      renameSync(path.join(dataDir, 'content-moved'), path.join(dataDir, 'content'))
      t.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200)
    }
  })
})
