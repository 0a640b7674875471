// Sign-in and role detection through public endpoints only.
//
// Reads never answer 401 (contract §3), so a key can only be judged by a write. Two probes
// are built so that they can never change anything, whoever answers them:
//  - SchemasWrite: PUT /api/schemas/<a> with a body named <b>. interface.md rule 5 makes a
//    mismatched name a bad request, so an allowed caller gets 400 (or 404), never a write.
//  - ContentWrite: DELETE of an entry whose slug is random, so it cannot exist: 404.
// 401 means "no valid key" (keys are on), 403 "valid key, role lacks the permission"; any
// other answer means the permission is granted. With no keys configured the first probe
// answers without 401 and the admin opens directly.
import { authHeaders } from './api.js'
import type { Role } from './types.js'

const STORAGE_KEY = 'lectern.apiKey'
const PROBE = 'lectern_admin_probe'

export interface Session {
  role: Role
  /** The key sent with every request; null when the server has no keys configured. */
  key: string | null
}

export type Detection =
  | { kind: 'signed-in', session: Session }
  | { kind: 'needs-key' }
  | { kind: 'invalid-key' }

type Verdict = 'granted' | 'unauthorized' | 'forbidden'

async function verdict (url: string, init: RequestInit, key: string | null): Promise<Verdict> {
  let res: Response
  try {
    res = await fetch(url, { ...init, cache: 'no-store', headers: { accept: 'application/json', ...authHeaders(key), ...(init.headers as Record<string, string> | undefined) } })
  } catch {
    throw new Error('The server cannot be reached. Check that it is running.')
  }
  // Drain the body so the connection is reused.
  await res.text().catch(() => '')
  if (res.status === 401) return 'unauthorized'
  if (res.status === 403) return 'forbidden'
  // The permission check runs before the handler: whatever the handler answered, the key passed.
  return 'granted'
}

const probeSchemasWrite = async (key: string | null): Promise<Verdict> => await verdict(`/api/schemas/${PROBE}`, {
  method: 'PUT',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ name: `${PROBE}_mismatch`, fields: {} })
}, key)

function randomSlug (): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12))
  return 'probe-' + Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('')
}

const probeContentWrite = async (key: string | null): Promise<Verdict> =>
  await verdict(`/api/content/${PROBE}/${randomSlug()}`, { method: 'DELETE' }, key)

/** Works out what `key` (or no key) may do. */
export async function detect (key: string | null): Promise<Detection> {
  const schemas = await probeSchemasWrite(key)
  if (schemas === 'unauthorized') return key === null ? { kind: 'needs-key' } : { kind: 'invalid-key' }
  if (schemas === 'granted') return { kind: 'signed-in', session: { role: 'admin', key } }
  const content = await probeContentWrite(key)
  if (content === 'unauthorized') return { kind: 'invalid-key' }
  return { kind: 'signed-in', session: { role: content === 'granted' ? 'editor' : 'viewer', key } }
}

/** The key lives for the browser session only (closed tab: gone). */
export function storedKey (): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY)
  } catch {
    return null
  }
}

export function storeKey (key: string | null): void {
  try {
    if (key === null) sessionStorage.removeItem(STORAGE_KEY)
    else sessionStorage.setItem(STORAGE_KEY, key)
  } catch { /* storage disabled: the key lives in memory until reload */ }
}

export const canWriteContent = (role: Role): boolean => role === 'admin' || role === 'editor'
export const canWriteSchemas = (role: Role): boolean => role === 'admin'
