// The fuzz suite at the HTTP layer (issue 28): generated requests written byte for byte on a
// socket of a listening server, on both stores: broken request lines and headers, conflicting
// framing, Expect, CONNECT, a missing Host. Every answer that is an error must be the envelope
// (contract §2), none a 5xx, and the server must answer or be waiting for the rest of a request:
// a short request timeout (1 s) makes it answer those too, so no connection is left hanging.
//
// FUZZ_RUNS (here a tenth of it, at least 250 per store) and FUZZ_SEED change the run, as in
// api.test.ts; RAW_REGRESSIONS keeps the requests that failed.
import type { AddressInfo } from 'node:net'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import t from 'tap'
import fc from 'fast-check'
import { Ajv } from 'ajv'
import { build, eachStore } from '../helper.js'
import { ErrorReply } from '../../types/errors.js'
import { ERROR_KINDS } from '../../lib/errors.js'
import { rawRequestArb, sendRaw, type RawAnswer } from './raw.js'

const RUNS = Math.max(250, Math.round(Number(process.env.FUZZ_RUNS ?? 2500) / 10))
const SEED = Number(process.env.FUZZ_SEED ?? 28)
/** Requests on the wire at once: a request the server waits on does not hold up the others. */
const CONCURRENCY = 8

/** Requests that answered outside the envelope before item 5 of issue 28 (found by hand and by seed 28). */
const RAW_REGRESSIONS: string[] = [
  'GET /api/content/a b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  'GET /api/content/%c0%ae HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  `GET /api/content/${'x'.repeat(600)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n',
  'GET /health HTTP/1.1\r\nHost: x\r\nExpect: nonsense\r\nConnection: close\r\n\r\n',
  'CONNECT x:443 HTTP/1.1\r\nHost: x\r\n\r\n',
  'POST /api/schemas HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{}'
]

const isEnvelope = new Ajv({ strict: false }).compile(ErrorReply)

function bodyText (answer: RawAnswer): string {
  switch (answer.headers['content-encoding']) {
    case 'br': return brotliDecompressSync(answer.body).toString()
    case 'gzip': return gunzipSync(answer.body).toString()
    default: return answer.body.toString()
  }
}

/** Why an answer breaks the contract (`<kind>: <details>`), or null. */
function problemOf (request: string, answer: RawAnswer): string | null {
  if (answer.statusCode === null) return answer.body.length === 0 ? 'no answer' : `bytes that are not an HTTP answer: ${answer.body.toString('latin1').slice(0, 80)}`
  if (answer.statusCode >= 500) return `answered ${answer.statusCode}`
  if (answer.statusCode < 400 || request.startsWith('HEAD ')) return null
  let body: unknown
  try {
    body = JSON.parse(bodyText(answer))
  } catch {
    return `an error body that is not JSON (${answer.statusCode}): ${answer.body.toString('latin1').slice(0, 80)}`
  }
  if (!isEnvelope(body)) return `an error body outside the envelope: ${JSON.stringify(body).slice(0, 120)}`
  const kind = Object.hasOwn(ERROR_KINDS, body.code) ? ERROR_KINDS[body.code as keyof typeof ERROR_KINDS] : undefined
  if (kind === undefined || kind.statusCode !== answer.statusCode || body.statusCode !== answer.statusCode) {
    return `an envelope that disagrees with its status (${answer.statusCode} ${body.code})`
  }
  return null
}

eachStore(t, async (t, _store, env) => {
  // A request the server waits on is answered (in the envelope) after 1 s, checked every 100 ms.
  const app = await build(t, env, { server: { requestTimeout: 1000, http: { requireHostHeader: false, requestTimeout: 1000, connectionsCheckingInterval: 100 } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port

  const requests = [...RAW_REGRESSIONS, ...fc.sample(rawRequestArb, { numRuns: RUNS, seed: SEED })]
  const failures = new Map<string, { count: number, index: number, request: string, answer: string }>()
  const statuses = new Map<string, number>()
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < requests.length) {
      const index = next++
      const request = requests[index] as string
      const answer = await sendRaw(port, request)
      const status = String(answer.statusCode ?? 'none')
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      const problem = problemOf(request, answer)
      if (problem === null) continue
      const kind = problem.replace(/: .*/s, '')
      const seen = failures.get(kind)
      if (seen !== undefined) seen.count++
      else failures.set(kind, { count: 1, index, request, answer: `${answer.statusCode ?? '-'} ${answer.body.toString('latin1').slice(0, 200)}` })
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))

  t.ok(requests.length > RUNS, `${requests.length} requests, seed ${SEED}; statuses ${[...statuses].sort().map(([s, n]) => `${s}×${n}`).join(' ')}`)
  t.ok((statuses.get('200') ?? 0) > requests.length / 20, 'a fair share of the requests were well-formed enough to be served')
  for (const [kind, { count, index, request, answer }] of failures) {
    const which = index < RAW_REGRESSIONS.length ? `regression case #${index}` : `request #${index - RAW_REGRESSIONS.length} of seed ${SEED}`
    t.fail(`${kind} (${count}×); first: ${which}`, { request: JSON.stringify(request.slice(0, 500)), answer })
  }
})
