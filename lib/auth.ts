// API keys and roles (contract §3). Pure: resolves a caller from header values.
import { createHash, timingSafeEqual } from 'node:crypto'
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
    if (presented === null) return { role: null, authenticated: false, invalidKey: false }
    const role = this.match(presented)
    return role === null
      ? { role: null, authenticated: false, invalidKey: true }
      : { role, authenticated: true, invalidKey: false }
  }
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
