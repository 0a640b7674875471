// Real webhook receivers for tests: node:http servers on 127.0.0.1 (port 0) that record every
// request (headers and raw body) and answer as the test says.
import http, { type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

export interface Received {
  headers: IncomingHttpHeaders
  /** The exact bytes received. */
  raw: Buffer
  body: Record<string, unknown>
  /** Date.now() when the request was complete. */
  at: number
}

export interface Answer {
  status?: number
  headers?: Record<string, string>
  /** Wait this long before answering. */
  delayMs?: number
  /** Never answer (until the receiver closes). */
  hang?: boolean
}

export type Responder = (request: Received, index: number) => Answer

export interface Receiver {
  url: string
  port: number
  received: Received[]
  /** Replaces how the receiver answers from now on. */
  answer: (responder: Responder) => void
  close: () => Promise<void>
}

/** A receiver answering 200 unless told otherwise; closed at the end of the test. */
export async function receiver (t: Test, responder: Responder = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = []
  let respond = responder
  const timers = new Set<NodeJS.Timeout>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      let body: Record<string, unknown> = {}
      try { body = JSON.parse(raw.toString('utf8')) as Record<string, unknown> } catch {}
      const r: Received = { headers: req.headers, raw, body, at: Date.now() }
      const index = received.push(r) - 1
      const a = respond(r, index)
      if (a.hang === true) return
      const send = (): void => {
        res.writeHead(a.status ?? 200, { 'content-type': 'text/plain', ...a.headers })
        res.end('ok')
      }
      if (a.delayMs === undefined) send()
      else {
        const timer = setTimeout(() => { timers.delete(timer); send() }, a.delayMs)
        timers.add(timer)
      }
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    for (const timer of timers) clearTimeout(timer)
    server.closeAllConnections()
    await new Promise<void>(resolve => server.close(() => { resolve() }))
  }
  t.teardown(close)
  return { url: `http://127.0.0.1:${port}/hook`, port, received, answer: r => { respond = r }, close }
}

/** A URL on 127.0.0.1 where nothing listens: connections are refused. */
export async function closedPortUrl (): Promise<string> {
  const server = http.createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>(resolve => server.close(() => { resolve() }))
  return `http://127.0.0.1:${port}/hook`
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function until<T> (
  check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 5000, what = 'condition'
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}
