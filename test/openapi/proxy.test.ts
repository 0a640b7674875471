// The real server behind Prism's validating proxy (`prism proxy --errors`), on every store: the
// traffic script draws no violation and no answer from Prism itself; every status it sees is
// declared on its operation, and every header the server sent is declared on that response.
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { request as send, type Dispatcher } from 'undici'
import t, { type Test } from 'tap'
import { KEYS_ENV, ROOT, STORES, freePort, startServer, tempDir, waitForHealth } from '../helper.js'
import type { OpenApiDocument, Operation } from '../../lib/openapi/document.js'
import { dataDirWithSchemas } from './fixtures.js'
import { trafficScript, type Call } from './traffic.js'

/** Headers of the transport, not of an operation. */
const TRANSPORT = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'])

/** Starts Prism's validating proxy in front of `upstream`; resolves once it answers. */
async function startPrism (t: Test, spec: string, upstream: string): Promise<string> {
  const port = await freePort()
  const prism = spawn(path.join(ROOT, 'node_modules', '.bin', 'prism'), ['proxy', spec, upstream, '--errors', '-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' })
  const exited = new Promise<number | null>(resolve => prism.once('exit', resolve))
  t.teardown(async () => { prism.kill(); await exited })
  await waitForHealth(t, port, exited, 60_000)
  return `http://127.0.0.1:${port}`
}

/** The operation a request reaches: a concrete path wins over a templated one. */
export function operationFor (doc: OpenApiDocument, method: string, pathname: string): Operation | undefined {
  const candidates = Object.keys(doc.paths).filter(p => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathname))
  candidates.sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
  return candidates.map(p => doc.paths[p]?.[method.toLowerCase()]).find(op => op !== undefined)
}

// undici's request, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request,
// which makes the asset route revalidate (200) rather than answer 304.
function request (call: Call, etags: Map<string, string>): { method: Dispatcher.HttpMethod, headers: Record<string, string>, body?: string | Buffer } {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(call.headers ?? {})) {
    headers[name] = value.replace(/\{etag:(\w+)\}/, (_, key: string) => etags.get(key) ?? '')
  }
  if (call.key !== undefined) headers.authorization = `Bearer ${call.key}`
  let body: string | Buffer | undefined
  if (call.raw !== undefined) {
    body = call.raw
  } else if (call.json !== undefined) {
    headers['content-type'] ??= 'application/json'
    body = JSON.stringify(call.json)
  } else if (call.form !== undefined) {
    const boundary = 'lectern-traffic-boundary'
    headers['content-type'] = `multipart/form-data; boundary=${boundary}`
    body = multipart(call.form, boundary)
  }
  return { method: call.method as Dispatcher.HttpMethod, headers, body }
}

/** A multipart/form-data body (written out: the global FormData is not undici's). */
function multipart (form: NonNullable<Call['form']>, boundary: string): Buffer {
  const parts: Buffer[] = []
  for (const [name, value] of Object.entries(form)) {
    const head = typeof value === 'string'
      ? `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`
      : `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${value.name}"\r\nContent-Type: ${value.type}\r\n\r\n`
    parts.push(Buffer.from(head), typeof value === 'string' ? Buffer.from(value) : Buffer.from(value.bytes), Buffer.from('\r\n'))
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(parts)
}

/**
 * Replays `script` through the proxy at `base`; HEAD and `direct` calls go to `server` itself:
 * Prism 5.14 parses the empty body of a HEAD answer as JSON and fails (a 500 of its own).
 */
async function replay (t: Test, base: string, server: string, doc: OpenApiDocument, script: Call[]): Promise<void> {
  const etags = new Map<string, string>()
  for (const call of script) {
    const what = `${call.method} ${call.url} → ${call.status}`
    const proxied = call.method !== 'HEAD' && call.direct !== true
    const url = call.url.replace('{cursor}', encodeURIComponent(etags.get('cursor') ?? ''))
    const res = await send((proxied ? base : server) + url, request(call, etags))
    const text = await res.body.text()
    const header = (name: string): string | undefined => { const v = res.headers[name]; return Array.isArray(v) ? v.join(', ') : v }
    const status = res.statusCode
    const fromPrism = (header('content-type') ?? '').includes('problem+json') || header('sl-violations') !== undefined
    if (fromPrism || status !== call.status) {
      t.fail(what, { status, body: text.slice(0, 600) })
      continue
    }
    if (call.saveEtag !== undefined) etags.set(call.saveEtag, header('etag') ?? '')
    if (call.saveCursor === true) etags.set('cursor', (JSON.parse(text) as { cursor: string }).cursor)
    const op = operationFor(doc, call.method, new URL(base + url).pathname)
    const declared = op?.responses?.[String(status)]
    if (declared === undefined) {
      t.fail(`${what}: status declared`)
      continue
    }
    const names = new Set(Object.keys(declared.headers ?? {}).map(h => h.toLowerCase()))
    // Prism adds its own CORS headers; this server runs without CORS.
    const undeclared = Object.keys(res.headers).filter(h => !TRANSPORT.has(h) && !(proxied && h.startsWith('access-control-')) && !names.has(h))
    t.same(undeclared, [], `${what}: every header declared`)
    if (status === 304) t.notOk(header('content-type') ?? header('content-length'), `${what}: no Content-Type, no Content-Length`)
  }
}

t.test('the traffic script through a validating proxy', async t => {
  const png = new Uint8Array(await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).png().toBuffer())
  for (const store of STORES) {
    await t.test(`store=${store}`, async t => {
      const port = await freePort()
      const server = startServer({ ...KEYS_ENV, CMS_STORE: store, CMS_SEED: 'false', CMS_PORT: String(port), CMS_HOST: '127.0.0.1', CMS_DATA_DIR: dataDirWithSchemas(t), CMS_LOG_LEVEL: 'warn' })
      t.teardown(async () => { server.child.kill(); await server.exited })
      await waitForHealth(t, port, server.exited)
      const doc = await (await fetch(`http://127.0.0.1:${port}/api/openapi.json`)).json() as OpenApiDocument
      const spec = path.join(tempDir(t), 'openapi.json')
      writeFileSync(spec, JSON.stringify(doc))
      const base = await startPrism(t, spec, `http://127.0.0.1:${port}`)
      const script = trafficScript(png)
      await replay(t, base, `http://127.0.0.1:${port}`, doc, script)
      // Every operation of the generic API and of one collection is reached by the script.
      const reached = new Set(script.map(c => operationFor(doc, c.method, new URL(base + c.url).pathname)?.operationId))
      const expected = Object.entries(doc.paths)
        .filter(([p]) => !p.startsWith('/api/content/') || p.includes('{collection}') || p.startsWith('/api/content/article'))
        .flatMap(([, item]) => Object.values(item).map(op => op.operationId))
      t.same(expected.filter(id => !reached.has(id)), [], 'every operation is reached')
    })
  }
})
