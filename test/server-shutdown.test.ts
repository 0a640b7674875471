// Graceful shutdown of the real process with a keep-alive client (issue 28 item 6): SIGTERM while
// an upload is in flight on a keep-alive connection answers the upload, closes the connection
// instead of waiting for the client to, and exits 0 well within the hard limit (10 s).
import http from 'node:http'
import path from 'node:path'
import t from 'tap'
import { STORES, freePort, startServer, storeEnv, tempDir, waitForHealth } from './helper.js'

const BOUNDARY = 'lectern-shutdown-boundary'

/** Polls the server's output until `pattern` shows up (the process writes it, nothing to await). */
async function outputShows (output: () => string, pattern: RegExp, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!pattern.test(output())) {
    if (Date.now() > deadline) return false
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  return true
}

for (const store of STORES) {
  t.test(`${store}: SIGTERM with an upload in flight on a keep-alive connection answers it and exits 0 at once`, async t => {
    const port = await freePort()
    const dataDir = path.join(tempDir(t), 'data')
    const { child, exited, output } = startServer({ ...await storeEnv(t, store, dataDir), CMS_PORT: String(port), CMS_HOST: '127.0.0.1', CMS_DATA_DIR: dataDir, CMS_SEED: 'false' })
    t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
    await waitForHealth(t, port, exited)

    const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 60_000 })
    t.teardown(() => { agent.destroy() })
    // A second, idle keep-alive connection: it must not hold the shutdown either.
    await new Promise<void>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/health', agent }, res => { res.resume(); res.on('end', resolve) }).on('error', reject)
    })
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/assets',
      agent,
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }
    })
    const answered = new Promise<{ status: number, body: string, closed: Promise<void> }>((resolve, reject) => {
      req.on('response', res => {
        let body = ''
        const closed = new Promise<void>(resolve => { res.socket.once('close', () => { resolve() }) })
        res.on('data', (d: Buffer) => { body += d.toString() })
        res.on('end', () => { resolve({ status: res.statusCode ?? 0, body, closed }) })
      })
      req.on('error', reject)
    })
    req.write(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="late.txt"\r\ncontent-type: text/plain\r\n\r\n`)
    req.write('x'.repeat(64 * 1024))
    t.ok(await outputShows(output, /"url":"\/api\/assets".*"msg":"incoming request"/), 'the upload reached the server')

    const signalled = Date.now()
    child.kill('SIGTERM')
    t.ok(await outputShows(output, /"msg":"shutting down/), 'the shutdown began with the upload in flight')
    req.end(`${'y'.repeat(1024)}\r\n--${BOUNDARY}--\r\n`)

    const res = await answered
    t.equal(res.status, 201, 'the upload in flight is answered')
    t.match(JSON.parse(res.body), { items: [{ name: 'late.txt', size: 65 * 1024 }] })
    await res.closed
    t.pass('and its keep-alive connection is closed by the server')
    t.equal(await exited, 0, 'exit code 0')
    const took = Date.now() - signalled
    t.ok(took < 5000, `stopped in ${took} ms, far below the 10 s limit`)
    t.notMatch(output(), /shutdown took too long/)
    t.match(output(), /"msg":"stopped"/)
  })
}
