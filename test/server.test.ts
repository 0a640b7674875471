// The real process: settings errors, start-up on a fresh data dir, graceful shutdown on signals.
import path from 'node:path'
import t from 'tap'
import { freePort, startServer as start, tempDir, waitForHealth } from './helper.js'

t.test('a bad setting stops start-up with one clear line and no stack trace', async t => {
  const { exited, output } = start({ CMS_STORE: 'mongo', CMS_DATA_DIR: path.join(tempDir(t), 'data') })
  t.equal(await exited, 1)
  t.equal(output().trim(), "lectern: invalid setting CMS_STORE: must be 'sqlite', 'file' or 'postgres', got 'mongo'")
})

t.test('an unknown role names CMS_API_KEYS', async t => {
  const { exited, output } = start({ CMS_API_KEYS: 'abcdefghijklmnopqrstuvwxyz:root', CMS_DATA_DIR: path.join(tempDir(t), 'data') })
  t.equal(await exited, 1)
  t.match(output().trim(), /^lectern: invalid setting CMS_API_KEYS: unknown role 'root'/)
  t.notMatch(output(), /abcdefghijklmnop/, 'the key is not echoed')
  t.notMatch(output(), /\n.*\n/, 'one line')
})

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`starts on a fresh data dir, serves, and stops cleanly on ${signal}`, async t => {
    const port = await freePort()
    const dataDir = path.join(tempDir(t), 'data')
    const { child, exited, output } = start({ CMS_PORT: String(port), CMS_HOST: '127.0.0.1', CMS_DATA_DIR: dataDir })
    t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
    await waitForHealth(t, port, exited)
    const health = await fetch(`http://127.0.0.1:${port}/health`)
    t.same(await health.json(), { status: 'ok' })
    // At info, each request logs through its own child logger, bound to the request id, with
    // Fastify's serializers.
    const completed = /"reqId":"req-[^"]+","res":\{"statusCode":200\}.*"msg":"request completed"/
    for (let i = 0; i < 50 && !completed.test(output()); i++) await new Promise(resolve => setTimeout(resolve, 20))
    t.match(output(), completed)
    t.match(output(), /"reqId":"req-[^"]+","req":\{"method":"GET","url":"\/health"/)
    child.kill(signal)
    t.equal(await exited, 0, 'exit code 0')
    t.match(output(), /"msg":"stopped"/)
  })
}

t.test('below info, requests write no lines', async t => {
  const port = await freePort()
  const { child, exited, output } = start({ CMS_PORT: String(port), CMS_HOST: '127.0.0.1', CMS_DATA_DIR: path.join(tempDir(t), 'data'), CMS_LOG_LEVEL: 'warn' })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  await waitForHealth(t, port, exited)
  for (let i = 0; i < 5; i++) await (await fetch(`http://127.0.0.1:${port}/api/collections`)).arrayBuffer()
  child.kill('SIGTERM')
  t.equal(await exited, 0)
  t.notMatch(output(), /incoming request|request completed/)
  t.notMatch(output(), /"level":30/, 'no info line at all')
})

t.test('a second process on the same data dir stops with one clear line; once the first is killed, the dir is free', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const port = await freePort()
  const first = start({ CMS_PORT: String(port), CMS_HOST: '127.0.0.1', CMS_DATA_DIR: dataDir })
  t.teardown(() => { if (first.child.exitCode === null) first.child.kill('SIGKILL') })
  await waitForHealth(t, port, first.exited)

  const second = start({ CMS_PORT: String(await freePort()), CMS_HOST: '127.0.0.1', CMS_DATA_DIR: dataDir })
  t.teardown(() => { if (second.child.exitCode === null) second.child.kill('SIGKILL') })
  t.equal(await second.exited, 1)
  t.match(second.output(), `start-up failed: the data directory ${dataDir} is in use by another Lectern process (CMS_DATA_DIR)`)
  t.notMatch(second.output(), /\n\s+at /, 'no stack trace')
  t.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200, 'the first one serves on')

  // A crash runs no clean-up: the lock goes with the process.
  first.child.kill('SIGKILL')
  await first.exited
  const thirdPort = await freePort()
  const third = start({ CMS_PORT: String(thirdPort), CMS_HOST: '127.0.0.1', CMS_DATA_DIR: dataDir })
  t.teardown(() => { if (third.child.exitCode === null) third.child.kill('SIGKILL') })
  await waitForHealth(t, thirdPort, third.exited)
  third.child.kill('SIGTERM')
  t.equal(await third.exited, 0)
})
