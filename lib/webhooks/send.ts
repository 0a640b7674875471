// One delivery attempt: POST the stored body with undici, within a hard time limit, and
// classify the answer. Never throws: every failure becomes an outcome.
import { request, type Dispatcher } from 'undici'
import { deliveryHeaders } from './payload.js'
import { classifyResponse, type AttemptOutcome } from './retry.js'

export interface AttemptInput {
  id: string
  event: string
  url: string
  body: string
}

export interface AttemptOptions {
  dispatcher: Dispatcher
  secret: string | null
  timeoutMs: number
  /** Aborts the attempt (graceful shutdown). */
  signal?: AbortSignal
  now?: () => number
}

/** At most this much of a receiver's answer is read; the rest is discarded with the socket. */
const MAX_RESPONSE_BYTES = 64 * 1024
const MAX_ERROR_LENGTH = 300

export async function attemptDelivery (delivery: AttemptInput, options: AttemptOptions): Promise<AttemptOutcome> {
  const now = options.now ?? Date.now
  const body = Buffer.from(delivery.body, 'utf8')
  // One controller per attempt, aborted by the time limit or by shutdown. (Not AbortSignal.any:
  // combining with the long-lived shutdown signal on every attempt has leaked in Node 20.)
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, options.timeoutMs)
  const onShutdown = (): void => { controller.abort() }
  if (options.signal?.aborted === true) controller.abort()
  options.signal?.addEventListener('abort', onShutdown, { once: true })
  const signal = controller.signal
  try {
    const { url, authorization } = splitCredentials(delivery.url)
    const headers = deliveryHeaders(delivery.event, delivery.id, body, options.secret)
    if (authorization !== null) headers.authorization = authorization
    const res = await request(url, {
      method: 'POST',
      dispatcher: options.dispatcher,
      headers,
      body,
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs
    })
    // The answer's body is read (and dropped) within the same time limit, so the connection
    // can be reused; its content is never stored, it may hold anything.
    await res.body.dump({ limit: MAX_RESPONSE_BYTES, signal })
    return classifyResponse(res.statusCode, res.headers['retry-after'], now())
  } catch (err) {
    return { kind: 'retry', status: null, error: describeError(err, timedOut, options.timeoutMs), retryAfterMs: null }
  } finally {
    clearTimeout(timer)
    options.signal?.removeEventListener('abort', onShutdown)
  }
}

/**
 * Credentials in a webhook URL (https://user:pass@host/hook) are sent as HTTP Basic
 * authentication, as a browser would, rather than silently dropped.
 */
export function splitCredentials (raw: string): { url: string, authorization: string | null } {
  const url = new URL(raw)
  if (url.username === '' && url.password === '') return { url: raw, authorization: null }
  const user = decodeURIComponent(url.username)
  const password = decodeURIComponent(url.password)
  url.username = ''
  url.password = ''
  return { url: url.href, authorization: `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}` }
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])

/** A short, safe description of a failed attempt: error code and message, no stack, no headers. */
export function describeError (err: unknown, timedOut: boolean, timeoutMs: number): string {
  const e = err as { code?: unknown, name?: unknown, message?: unknown } | null
  const code = typeof e?.code === 'string' ? e.code : null
  if (timedOut || (code !== null && TIMEOUT_CODES.has(code)) || e?.name === 'TimeoutError') {
    return `timed out after ${timeoutMs} ms`
  }
  const message = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err)
  const text = code !== null && !message.includes(code) ? `${code}: ${message}` : message
  return text.replace(/\s+/g, ' ').slice(0, MAX_ERROR_LENGTH)
}
