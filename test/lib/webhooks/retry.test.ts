import t from 'tap'
import {
  ATTEMPT_TIMEOUT_MS, MAX_ATTEMPTS, MAX_DELAY_MS, backoffDelay, classifyResponse, parseRetryAfter, retryDelay
} from '../../../lib/webhooks/retry.js'

const low = (): number => 0
const high = (): number => 0.999999
const mid = (): number => 0.5

t.test('the back-off doubles from the base: 2 s, 4 s, 8 s, 16 s, 32 s ... at the default', async t => {
  t.same([1, 2, 3, 4, 5, 6].map(n => backoffDelay(n, 2000, mid)), [2000, 4000, 8000, 16000, 32000, 64000])
  t.equal(backoffDelay(1, 10, mid), 10)
  t.equal(backoffDelay(3, 10, mid), 40)
})

t.test('jitter stays within ±25 % and the delay keeps growing', async t => {
  for (let n = 1; n <= MAX_ATTEMPTS; n++) {
    const nominal = 2000 * 2 ** (n - 1)
    t.ok(backoffDelay(n, 2000, low) >= nominal * 0.75, `attempt ${n} low`)
    t.ok(backoffDelay(n, 2000, high) <= nominal * 1.25, `attempt ${n} high`)
    if (n > 1) t.ok(backoffDelay(n, 2000, low) > backoffDelay(n - 1, 2000, high) * 0.9, `attempt ${n} grows`)
  }
  const seen = new Set(Array.from({ length: 20 }, () => backoffDelay(4, 2000)))
  t.ok(seen.size > 1, 'Math.random jitters by default')
})

t.test('at the default base, at least 5 attempts span at least a minute, even at the lowest jitter', async t => {
  t.ok(MAX_ATTEMPTS >= 5)
  let span = 0
  for (let n = 1; n < MAX_ATTEMPTS; n++) span += backoffDelay(n, 2000, low)
  t.ok(span >= 60_000, `the ${MAX_ATTEMPTS} attempts span ${span} ms`)
  t.equal(ATTEMPT_TIMEOUT_MS, 5000)
})

t.test('no delay exceeds the cap, and huge attempt numbers do not overflow', async t => {
  t.equal(backoffDelay(40, 2000, high), MAX_DELAY_MS)
  t.equal(backoffDelay(1000, 3_600_000, mid), MAX_DELAY_MS)
  t.ok(backoffDelay(0, 1, low) >= 1, 'never below 1 ms')
})

t.test('Retry-After: delta seconds or HTTP date, capped', async t => {
  const now = Date.parse('2025-01-01T00:00:00Z')
  t.equal(parseRetryAfter('3', now), 3000)
  t.equal(parseRetryAfter(' 0 ', now), 0)
  t.equal(parseRetryAfter(['2', '9'], now), 2000)
  t.equal(parseRetryAfter('Wed, 01 Jan 2025 00:00:10 GMT', now), 10_000)
  t.equal(parseRetryAfter('Wednesday, 01-Jan-25 00:00:10 GMT', now), 10_000, 'the obsolete RFC 850 form')
  t.equal(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now), 0, 'a past date means now')
  t.equal(parseRetryAfter('999999999', now), MAX_DELAY_MS)
  t.equal(parseRetryAfter('soon', now), null)
  t.equal(parseRetryAfter('-5', now), null)
  t.equal(parseRetryAfter('', now), null)
  t.equal(parseRetryAfter(undefined, now), null)
})

t.test('2xx delivered; 429 and 5xx retried; other statuses final', async t => {
  const now = 0
  t.same(classifyResponse(200, undefined, now), { kind: 'delivered', status: 200 })
  t.same(classifyResponse(204, undefined, now), { kind: 'delivered', status: 204 })
  t.same(classifyResponse(500, '7', now), { kind: 'retry', status: 500, error: 'HTTP 500', retryAfterMs: null }, 'Retry-After only on 429/503')
  t.same(classifyResponse(502, undefined, now), { kind: 'retry', status: 502, error: 'HTTP 502', retryAfterMs: null })
  t.same(classifyResponse(503, '7', now), { kind: 'retry', status: 503, error: 'HTTP 503', retryAfterMs: 7000 })
  t.same(classifyResponse(429, '1', now), { kind: 'retry', status: 429, error: 'HTTP 429', retryAfterMs: 1000 })
  t.same(classifyResponse(429, undefined, now), { kind: 'retry', status: 429, error: 'HTTP 429', retryAfterMs: null })
  for (const status of [400, 401, 403, 404, 408, 410, 413, 422]) {
    t.same(classifyResponse(status, '1', now), { kind: 'failed', status, error: `HTTP ${status}` }, `${status} is final`)
  }
  t.match(classifyResponse(301, undefined, now), { kind: 'failed', status: 301, error: /redirects are not followed/ })
})

t.test('the retry delay is Retry-After when given, else the back-off', async t => {
  t.equal(retryDelay({ retryAfterMs: 1500 }, 3, 10, mid), 1500)
  t.equal(retryDelay({ retryAfterMs: 0 }, 3, 10, mid), 0)
  t.equal(retryDelay({ retryAfterMs: null }, 3, 10, mid), 40)
})
