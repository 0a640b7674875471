// How the `lectern` commands reach Lectern: one transport, an HTTP server (`--server`) or an app
// built in-process on a data directory (`--data-dir`, the entry file builds it), so every command
// goes through the same API and its write rules, on every store.

export interface Reply {
  status: number
  body: Buffer
}

export interface Transport {
  request: (method: string, url: string, json?: unknown) => Promise<Reply>
  close: () => Promise<void>
}

/** An error of the API, with the message of its envelope. */
export class ApiError extends Error {
  constructor (readonly status: number, message: string) {
    super(message)
    this.name = 'ApiError'
  }
}

/** The message of an error answer's envelope (and its `errors`), or its status. */
export function replyMessage (reply: Reply): string {
  try {
    const body = JSON.parse(reply.body.toString('utf8')) as { message?: unknown, errors?: unknown }
    const errors = Array.isArray(body.errors) ? `: ${body.errors.join('; ')}` : ''
    return `${typeof body.message === 'string' ? body.message : `status ${reply.status}`}${errors}`
  } catch {
    return `status ${reply.status}`
  }
}

/** A page size the list endpoints accept (contract §4: 1 to 1000). */
export const PAGE_SIZE = 1000

export class Api {
  constructor (private readonly transport: Transport) {}

  async request (method: string, url: string, json?: unknown): Promise<Reply> {
    return await this.transport.request(method, url, json)
  }

  /** The body of a GET, as sent; a non-2xx answer throws an ApiError with the envelope's message. */
  async getBytes (url: string): Promise<Buffer> {
    const reply = await this.transport.request('GET', url)
    if (reply.status >= 300) throw new ApiError(reply.status, `GET ${url}: ${replyMessage(reply)}`)
    return reply.body
  }

  /** GET of a JSON body, parsed; a non-2xx answer throws an ApiError with the envelope's message. */
  async get<T> (url: string): Promise<T> {
    return JSON.parse((await this.getBytes(url)).toString('utf8')) as T
  }

  /** Every item of a paged list, page by page, as the raw JSON of each item. */
  async * pages<T> (url: string): AsyncGenerator<T[]> {
    const sep = url.includes('?') ? '&' : '?'
    for (let page = 1; ; page++) {
      const body = await this.get<{ items: T[], pages: number }>(`${url}${sep}_per_page=${PAGE_SIZE}&_page=${page}`)
      yield body.items
      if (page >= body.pages) return
    }
  }
}

/** The query string of a scope: `_locale` and `_environment` when set. */
export function scopeQuery (locale: string | null, environment: string | undefined): string {
  const params = new URLSearchParams()
  if (locale !== null) params.set('_locale', locale)
  if (environment !== undefined) params.set('_environment', environment)
  return params.toString()
}

/** A transport to a running server, with an API key when given. */
export function httpTransport (server: string, key: string | undefined): Transport {
  const base = server.replace(/\/+$/, '')
  return {
    async request (method, url, json) {
      const headers: Record<string, string> = {}
      if (key !== undefined) headers.authorization = `Bearer ${key}`
      if (json !== undefined) headers['content-type'] = 'application/json'
      const res = await fetch(base + url, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) })
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()) }
    },
    async close () {}
  }
}
