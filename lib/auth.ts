// API keys and roles (contract §3), and the admin's sessions. Pure: resolves a caller from
// header values.
//
// A session is a key exchanged for a signed, expiring cookie (routes/api/session): the cookie
// names the key by an HMAC of it (never the key), so the key's current role applies and a key
// removed from the configuration ends its sessions. A new session secret ends them all.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { ApiKey, Role } from './config.js'

export type Permission = 'ContentWrite' | 'SchemasWrite' | 'AssetsWrite'

const GRANTS: Record<Role, readonly Permission[]> = {
  admin: ['ContentWrite', 'SchemasWrite', 'AssetsWrite'],
  editor: ['ContentWrite', 'AssetsWrite'],
  viewer: []
}

export interface Caller {
  /** The key's role; `admin` for everyone when no keys are configured; null when anonymous. */
  role: Role | null
  /** False only when keys are configured and no valid key was presented. */
  authenticated: boolean
  /** True when a key was presented that matches no configured key. */
  invalidKey: boolean
  /** Why a presented session counts for nothing (expired, signed out, a write without its CSRF token). */
  refusal?: string
}

export function can (caller: Caller, permission: Permission): boolean {
  return caller.role !== null && GRANTS[caller.role].includes(permission)
}

/** True when the caller holds one of `roles` (everyone is admin when no keys are configured). */
export function hasRole (caller: Caller, ...roles: Role[]): boolean {
  return caller.role !== null && roles.includes(caller.role)
}

export function seesDrafts (caller: Caller): boolean {
  return caller.authenticated
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest()

export class KeyRing {
  private readonly keys: Array<{ digest: Buffer, role: Role }>

  constructor (keys: ApiKey[]) {
    // Only digests are kept: equal lengths make timingSafeEqual applicable to any input.
    this.keys = keys.map(k => ({ digest: digest(k.key), role: k.role }))
  }

  get enabled (): boolean {
    return this.keys.length > 0
  }

  /** Every configured key is compared, whatever matches, so timing reveals nothing. */
  match (presented: string): Role | null {
    const d = digest(presented)
    let role: Role | null = null
    for (const k of this.keys) {
      if (timingSafeEqual(k.digest, d) && role === null) role = k.role
    }
    return role
  }

  resolve (authorization: string | undefined, apiKeyHeader: string | undefined): Caller {
    if (!this.enabled) return { role: 'admin', authenticated: true, invalidKey: false }
    const presented = presentedKey(authorization, apiKeyHeader)
    if (presented === null) return ANONYMOUS
    const role = this.match(presented)
    return role === null
      ? { role: null, authenticated: false, invalidKey: true }
      : { role, authenticated: true, invalidKey: false }
  }

  /** The session id of `presented` (an HMAC of its digest under `secret`), or null for no configured key. */
  keyId (presented: string, secret: Buffer): string | null {
    return this.match(presented) === null ? null : keyIdOf(digest(presented), secret)
  }

  /** The role of the configured key a session names; every key is compared, whatever matches. */
  roleOfKeyId (keyId: string, secret: Buffer): Role | null {
    const wanted = Buffer.from(keyId)
    let role: Role | null = null
    for (const k of this.keys) {
      const id = Buffer.from(keyIdOf(k.digest, secret))
      if (id.length === wanted.length && timingSafeEqual(id, wanted) && role === null) role = k.role
    }
    return role
  }

  /**
   * A request's caller: its key when it presents one, else its session cookie. A session counts
   * for a write (`unsafe`) only with its CSRF token beside it (sessionCsrf), which a page of
   * another origin cannot read nor send.
   */
  resolveRequest (request: PresentedCredentials, sessions: SessionSigner | null, now: number): Caller {
    if (!this.enabled || presentedKey(request.authorization, request.apiKey) !== null || request.session === null || sessions === null) {
      return this.resolve(request.authorization, request.apiKey)
    }
    const session = sessions.verify(request.session, now)
    const role = session === null ? null : this.roleOfKeyId(session.keyId, sessions.secret)
    if (role === null) return { ...ANONYMOUS, refusal: 'The session has expired or was signed out. Sign in again.' }
    if (request.unsafe && !sessions.csrfMatches(request.session, request.csrf)) {
      return { ...ANONYMOUS, refusal: `A write with a session cookie needs its ${CSRF_HEADER} header.` }
    }
    return { role, authenticated: true, invalidKey: false }
  }
}

const ANONYMOUS: Caller = { role: null, authenticated: false, invalidKey: false }

/** What a request presents: its key headers, its session cookie and CSRF header, and whether it writes. */
export interface PresentedCredentials {
  authorization: string | undefined
  apiKey: string | undefined
  session: string | null
  csrf: string | undefined
  /** Not GET, HEAD or OPTIONS. */
  unsafe: boolean
}

export const SESSION_COOKIE = 'lectern_session'
export const CSRF_HEADER = 'x-csrf-token'

const mac = (secret: Buffer, text: string): string => createHmac('sha256', secret).update(text, 'utf8').digest('base64url')
const keyIdOf = (keyDigest: Buffer, secret: Buffer): string => mac(secret, `key:${keyDigest.toString('hex')}`).slice(0, 22)

function sameText (a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export interface SessionClaims {
  keyId: string
  /** Seconds since the epoch. */
  expiresAt: number
}

/** Signs and checks session tokens `<keyId>.<expiresAt>.<nonce>.<mac>` under one secret. */
export class SessionSigner {
  constructor (readonly secret: Buffer) {}

  issue (keyId: string, expiresAt: number): string {
    const body = `${keyId}.${expiresAt}.${randomBytes(16).toString('base64url')}`
    return `${body}.${mac(this.secret, `session:${body}`)}`
  }

  /** The claims of a token signed under this secret and not expired at `now` (ms), or null. */
  verify (token: string, now: number): SessionClaims | null {
    const parts = token.split('.')
    if (parts.length !== 4) return null
    const [keyId = '', expires = '', nonce = '', signature = ''] = parts
    const body = `${keyId}.${expires}.${nonce}`
    if (!sameText(signature, mac(this.secret, `session:${body}`))) return null
    const expiresAt = Number(expires)
    if (!Number.isSafeInteger(expiresAt) || expiresAt * 1000 <= now) return null
    return { keyId, expiresAt }
  }

  /** The CSRF token of a session: bound to it, so one session's token is useless with another. */
  csrf (token: string): string {
    return mac(this.secret, `csrf:${token}`)
  }

  csrfMatches (token: string, presented: string | undefined): boolean {
    return presented !== undefined && sameText(presented, this.csrf(token))
  }
}

/** The session cookie's value from a Cookie header, or null. */
export function sessionCookie (header: string | undefined): string | null {
  if (header === undefined) return null
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === SESSION_COOKIE) return part.slice(at + 1).trim()
  }
  return null
}

/** The key from `Authorization: Bearer <key>` or `X-API-Key: <key>`, or null. */
export function presentedKey (authorization: string | undefined, apiKeyHeader: string | undefined): string | null {
  if (typeof authorization === 'string') {
    const m = /^Bearer\s+(.+)$/i.exec(authorization.trim())
    if (m?.[1] !== undefined) return m[1].trim()
  }
  if (typeof apiKeyHeader === 'string' && apiKeyHeader.trim() !== '') return apiKeyHeader.trim()
  return null
}
