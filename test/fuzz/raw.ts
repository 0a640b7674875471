// Generated HTTP/1.x requests written byte for byte on a socket, for what inject cannot send:
// request lines with spaces, control characters or odd versions, header lines that are not
// headers, conflicting framing (Content-Length with Transfer-Encoding, bad chunks), Expect,
// CONNECT, a missing Host. And the client that reads one answer off a connection.
import net from 'node:net'
import fc from 'fast-check'
import { ADMIN_KEY } from '../helper.js'
import { nastyText, queryString, segment } from './requests.js'

export interface RawAnswer {
  /** Null when the connection closed (or timed out) without a status line. */
  statusCode: number | null
  headers: Record<string, string>
  body: Buffer
}

const method = fc.oneof(
  { weight: 8, arbitrary: fc.constant('GET') },
  { weight: 4, arbitrary: fc.constantFrom('HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
  { weight: 1, arbitrary: fc.constantFrom('CONNECT', 'TRACE', 'PRI', 'G@T', 'get', '', 'GET GET', 'M-SEARCH', 'X'.repeat(30)) }
)

const target = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom('/health', '/api/content/posts', '/api/content/posts/first', '/api/assets/a.txt', '/api/schemas', '/api/collections/posts/slug-check'), queryString).map(([p, q]) => p + q) },
  { weight: 3, arbitrary: fc.array(segment(['api', 'content', 'posts', 'first']), { minLength: 1, maxLength: 4 }).map(s => `/${s.join('/')}`) },
  { weight: 2, arbitrary: nastyText.map(t => `/api/content/${t}`) },
  { weight: 1, arbitrary: fc.constantFrom('*', 'http://evil.example/health', 'x:443', '', '/a b', '/\u0001', '/\u00e9', '//health', `/${'a'.repeat(10_000)}`, '/health#frag', '/health?%') }
)

const version = fc.oneof({ weight: 10, arbitrary: fc.constant('HTTP/1.1') }, { weight: 1, arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'HTTP/1.1x', 'http/1.1', '') })

const headerLine = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(`Authorization: Bearer ${ADMIN_KEY}`, 'Accept: */*', 'Accept-Encoding: gzip, br', 'Content-Type: application/json', 'If-None-Match: *', 'Range: bytes=0-1') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('Expect: 100-continue', 'Expect: nonsense', 'Transfer-Encoding: chunked', 'Transfer-Encoding: gzip', 'Content-Length: 5', 'Content-Length: -1', 'Content-Length: abc',
      'Upgrade: websocket', 'Connection: Upgrade', 'Bad Header: x', 'NoColon', ': empty name', 'X-Ctl: a\u0001b', ' Folded: x', `X-Big: ${'a'.repeat(20_000)}`, 'Host: other', 'Host:')
  },
  { weight: 1, arbitrary: fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,12}$/), nastyText).map(([name, value]) => `X-${name}: ${value}`) }
)

const body = fc.oneof(
  { weight: 4, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.constantFrom('{}', '{"_slug":"raw","title":"Raw"}', '{', '0\r\n\r\n', 'zz\r\n{}\r\n0\r\n\r\n', '5\r\n{"a":\r\n0\r\n\r\n') },
  { weight: 1, arbitrary: nastyText }
)

/** A request as bytes: most are well-framed with `Connection: close`, some are broken on purpose. */
export const rawRequestArb: fc.Arbitrary<string> = fc.record({
  method,
  target,
  version,
  host: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  headers: fc.array(headerLine, { maxLength: 4 }),
  body,
  framed: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  lineEnd: fc.oneof({ weight: 10, arbitrary: fc.constant('\r\n') }, { weight: 1, arbitrary: fc.constantFrom('\n', '\r') })
}).map(r => {
  const lines = [`${r.method} ${r.target} ${r.version}`.trimEnd()]
  if (r.host) lines.push('Host: fuzz.example')
  lines.push(...r.headers)
  // A framed request says how long its body is; an unframed one leaves it to what the headers say.
  if (r.framed && !r.headers.some(h => /^(content-length|transfer-encoding):/i.test(h))) lines.push(`Content-Length: ${Buffer.byteLength(r.body)}`)
  lines.push('Connection: close')
  return lines.join(r.lineEnd) + r.lineEnd + r.lineEnd + r.body
})

/** The head and body of the first answer on a connection, read until it is complete or closed. */
function parse (data: Buffer): (RawAnswer & { complete: boolean }) | null {
  const end = data.indexOf('\r\n\r\n')
  if (end === -1) return null
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n')
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)
  if (status === null) return null
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  const statusCode = Number(status[1])
  // An interim 100 Continue comes before the answer.
  if (statusCode === 100) {
    const rest = parse(data.subarray(end + 4))
    return rest
  }
  const body = data.subarray(end + 4)
  const length = headers['content-length']
  const complete = length !== undefined && body.length >= Number(length)
  return { statusCode, headers, body: length === undefined ? body : body.subarray(0, Number(length)), complete }
}

/** Writes `request` on a new connection and reads the answer; gives up after `timeoutMs`. */
export async function sendRaw (port: number, request: string, timeoutMs = 10_000): Promise<RawAnswer> {
  return await new Promise(resolve => {
    const socket = net.connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let settled = false
    const finish = (): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      const answer = parse(Buffer.concat(chunks))
      resolve(answer === null ? { statusCode: null, headers: {}, body: Buffer.concat(chunks) } : answer)
    }
    const timer = setTimeout(finish, timeoutMs)
    socket.on('data', chunk => {
      chunks.push(chunk)
      if (parse(Buffer.concat(chunks))?.complete === true) finish()
    })
    // The server may close before reading all of a broken request: what it wrote is still read.
    socket.on('error', () => {})
    socket.on('close', finish)
    // Not end(): a half-closed connection makes Node drop the request before an async answer.
    socket.write(request)
  })
}
