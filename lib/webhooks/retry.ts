// When to try a delivery again (contract §6): network errors, 5xx and 429 are retried with
// exponential back-off and jitter, honouring Retry-After on 429/503; other answers are final.

/** Attempts per delivery, the first included. At the default 2 s base they span about 17 minutes. */
export const MAX_ATTEMPTS = 10
/** One attempt (connect, headers and body) may take this long. */
export const ATTEMPT_TIMEOUT_MS = 5000
/** No single wait, whether from back-off or from Retry-After, exceeds this. */
export const MAX_DELAY_MS = 60 * 60 * 1000
/** Spread of the jitter around the nominal back-off: ±25 %. */
const JITTER = 0.25

/**
 * The wait after the `attempt`-th failed attempt (1-based): base · 2^(attempt−1), jittered by
 * ±25 % so that receivers coming back are not hit by every delivery at once. With the default
 * base of 2000 ms: about 2 s, 4 s, 8 s, 16 s, 32 s, 64 s ...
 */
export function backoffDelay (attempt: number, baseMs: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30)
  const nominal = Math.min(baseMs * 2 ** exponent, MAX_DELAY_MS)
  const jittered = nominal * (1 - JITTER + 2 * JITTER * random())
  return Math.min(Math.max(Math.round(jittered), 1), MAX_DELAY_MS)
}

/**
 * Retry-After as milliseconds from `now`: delta-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Null when absent or unparsable; capped at MAX_DELAY_MS; a date in the past gives 0.
 */
export function parseRetryAfter (value: string | string[] | undefined, now: number): number | null {
  const raw = Array.isArray(value) ? value[0] : value
  if (raw === undefined) return null
  const text = raw.trim()
  if (text === '') return null
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_DELAY_MS)
  // Every HTTP-date form starts with a day name; Date.parse alone would take '-5' for a year.
  if (!/^[A-Za-z]{3,9},?\s/.test(text)) return null
  const at = Date.parse(text)
  if (Number.isNaN(at)) return null
  return Math.min(Math.max(at - now, 0), MAX_DELAY_MS)
}

export type AttemptOutcome =
  | { kind: 'delivered', status: number }
  /** Try again; `retryAfterMs` is the receiver's Retry-After when it sent one. */
  | { kind: 'retry', status: number | null, error: string, retryAfterMs: number | null }
  | { kind: 'failed', status: number, error: string }

/** Classifies an HTTP answer: 2xx delivered; 429 and 5xx retried; anything else final. */
export function classifyResponse (status: number, retryAfter: string | string[] | undefined, now: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered', status }
  const error = `HTTP ${status}`
  if (status === 429 || status >= 500) {
    const honoured = status === 429 || status === 503 ? parseRetryAfter(retryAfter, now) : null
    return { kind: 'retry', status, error, retryAfterMs: honoured }
  }
  // 3xx are not followed (a webhook URL should be the final one), and 4xx mean the receiver
  // rejects this request as it is: sending it again would not change the answer.
  return { kind: 'failed', status, error: status < 400 ? `${error} (redirects are not followed)` : error }
}

/** The wait before the next attempt after a retryable failure of attempt number `attempts`. */
export function retryDelay (outcome: { retryAfterMs: number | null }, attempts: number, baseMs: number, random?: () => number): number {
  return outcome.retryAfterMs ?? backoffDelay(attempts, baseMs, random)
}
