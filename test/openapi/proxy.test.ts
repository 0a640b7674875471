// The real server behind Prism's validating proxy (`prism proxy --errors`), on every store: the
// traffic script draws no violation and no answer from Prism itself; every status it sees is
// declared on its operation, and every header the server sent is declared on that response.
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { request as send, type Dispatcher } from 'undici'
import t, { type Test } from 'tap'
import { KEYS_ENV, ROOT, STORES, freePort, startServer, storeEnv, tempDir, waitForHealth } from '../helper.js'
import type { OpenApiDocument, Operation } from '../../lib/openapi/document.js'
import { dataDirWithSchemas } from './fixtures.js'
import { UPLOAD_LIMIT, trafficScript, type Call } from './traffic.js'
import { decodeSyncCursor, encodeSyncCursor } from '../../lib/sync/cursor.js'
import { loadSharedSyncSecret, loadSyncSecret } from '../../lib/sync/secret.js'
import { PostgresStore } from '../../lib/store/postgres.js'

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
async function replay (t: Test, base: string, server: string, doc: OpenApiDocument, script: Call[], ahead: (cursor: string) => string): Promise<Set<string>> {
  const seen = new Set<string>()
  const etags = new Map<string, string>()
  for (const call of script) {
    const what = `${call.method} ${call.url} → ${call.status}`
    const proxied = call.method !== 'HEAD' && call.direct !== true
    const url = call.url.replace('{cursor}', encodeURIComponent(etags.get('cursor') ?? '')).replace('{id}', encodeURIComponent(etags.get('id') ?? ''))
      .replace('{ahead}', () => encodeURIComponent(ahead(etags.get('cursor') ?? '')))
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
    if (call.saveId === true) etags.set('id', (JSON.parse(text) as { id: string }).id)
    const op = operationFor(doc, call.method, new URL(base + url).pathname)
    const declared = op?.responses?.[String(status)]
    if (declared === undefined) {
      t.fail(`${what}: status declared`)
      continue
    }
    seen.add(`${op?.operationId ?? ''} ${status}`)
    const names = new Set(Object.keys(declared.headers ?? {}).map(h => h.toLowerCase()))
    // Prism adds its own CORS headers; this server runs without CORS.
    const undeclared = Object.keys(res.headers).filter(h => !TRANSPORT.has(h) && !(proxied && h.startsWith('access-control-')) && !names.has(h))
    t.same(undeclared, [], `${what}: every header declared`)
    if (status === 304) t.notOk(header('content-type') ?? header('content-length'), `${what}: no Content-Type, no Content-Length`)
  }
  return seen
}

/**
 * Declared statuses the replay does not draw, each for a reason (anything else a route declares
 * must be seen, so coverage cannot drop unnoticed):
 * - 400, 500 and 503 on every operation: what any route answers around its handler (a request
 *   without Host, which Prism and undici always send; an internal error; shutting down or an
 *   unavailable store); the routes' own 400s are replayed, but are not told apart from those.
 * - The generic `/api/content/{collection}...` operations: a known collection takes its concrete
 *   path, so the generic ones are reached with unknown collections only (404).
 * - A concrete collection path answers 404 (unknown collection) once its schema is deleted, when
 *   a regenerated document no longer lists it.
 * - postAssets 409: no free name left after 10,000 uploads of one name.
 */
const EXCEPTED = new Set(['postAssets 409', 'getContentArticle 404', 'postContentArticle 404'])
const AROUND_EVERY_ROUTE = new Set(['400', '500', '503'])

/** `<operationId> <status>` of every declared status not seen (a HEAD status counts when its GET's is seen). */
function unseenStatuses (doc: OpenApiDocument, seen: Set<string>): string[] {
  const unseen: string[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    if (path.startsWith('/api/content/') && !path.startsWith('/api/content/article') && !path.includes('{collection}')) continue
    for (const op of Object.values(item)) {
      const id = op.operationId ?? ''
      for (const status of Object.keys(op.responses ?? {})) {
        const pair = `${id} ${status}`
        if (seen.has(pair) || EXCEPTED.has(pair) || AROUND_EVERY_ROUTE.has(status)) continue
        if (path.includes('{collection}') && status !== '404') continue
        if (id.startsWith('head') && (seen.has(`get${id.slice(4)} ${status}`) || EXCEPTED.has(`get${id.slice(4)} ${status}`))) continue
        unseen.push(pair)
      }
    }
  }
  return unseen
}

// A server and a Prism proxy per store, each replaying the whole script: a minute or so each on a busy machine.
t.setTimeout(Math.max(120_000, STORES.length * 90_000))

/** The key the server signs sync cursors with: its data dir's, or with postgres the database's (one for every replica). */
async function serverSyncSecret (dataDir: string, env: Record<string, string>): Promise<Buffer> {
  if (env.CMS_STORE !== 'postgres') return await loadSyncSecret(dataDir)
  const store = new PostgresStore({ dataDir, databaseUrl: env.CMS_DATABASE_URL })
  await store.open()
  try {
    return await loadSharedSyncSecret(store)
  } finally {
    await store.close()
  }
}

t.test('the traffic script through a validating proxy', async t => {
  const png = new Uint8Array(await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).png().toBuffer())
  for (const store of STORES) {
    await t.test(`store=${store}`, async t => {
      const port = await freePort()
      const dataDir = dataDirWithSchemas(t)
      const env = await storeEnv(t, store, dataDir)
      const server = startServer({ ...KEYS_ENV, CMS_UPLOAD_LIMIT: String(UPLOAD_LIMIT), ...env, CMS_SEED: 'false', CMS_PORT: String(port), CMS_HOST: '127.0.0.1', CMS_DATA_DIR: dataDir, CMS_LOG_LEVEL: 'warn' })
      t.teardown(async () => { server.child.kill(); await server.exited })
      await waitForHealth(t, port, server.exited)
      const doc = await (await fetch(`http://127.0.0.1:${port}/api/openapi.json`)).json() as OpenApiDocument
      const spec = path.join(tempDir(t), 'openapi.json')
      writeFileSync(spec, JSON.stringify(doc))
      const base = await startPrism(t, spec, `http://127.0.0.1:${port}`)
      const script = trafficScript(png)
      // The server's sync key signs a cursor like the recorded one, a million changes ahead.
      const secret = await serverSyncSecret(dataDir, env)
      const ahead = (text: string): string => {
        const cursor = decodeSyncCursor(text, secret)
        if (cursor === null) throw new Error('no sync cursor recorded')
        return encodeSyncCursor({ ...cursor, seq: cursor.seq + 1_000_000 }, secret)
      }
      const seen = await replay(t, base, `http://127.0.0.1:${port}`, doc, script, ahead)
      // Every operation of the generic API and of one collection is reached by the script.
      const reached = new Set(script.map(c => operationFor(doc, c.method, new URL(base + c.url).pathname)?.operationId))
      const expected = Object.entries(doc.paths)
        .filter(([p]) => !p.startsWith('/api/content/') || p.includes('{collection}') || p.startsWith('/api/content/article'))
        .flatMap(([, item]) => Object.values(item).map(op => op.operationId))
      t.same(expected.filter(id => !reached.has(id)), [], 'every operation is reached')
      t.same(unseenStatuses(doc, seen), [], 'every status of every operation is seen, but the few excepted')
    })
  }
})
