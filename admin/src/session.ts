// Sign-in through the server's session routes (README "Sessions"): the key is sent once, to
// POST /api/session, and exchanged for an HttpOnly cookie that no script here can read; every
// tab of the browser shares it. What the page keeps is the session's CSRF token, which writes
// carry in X-CSRF-Token (api.ts), and which another tab gets from GET /api/session.
import { ApiError, request, setCsrfToken } from './api.js'
import type { Role } from './types.js'

export interface SessionReply {
  role: Role | null
  keys: boolean
  session: boolean
  csrf: string | null
  expires_at: string | null
  preview_url: string | null
}

export interface Session {
  role: Role
  /** True when the server has no API keys: nothing to sign in to, nothing to sign out of. */
  open: boolean
  /** CMS_PREVIEW_URL, or null. */
  previewUrl: string | null
}

export type Detection =
  | { kind: 'signed-in', session: Session }
  | { kind: 'needs-key' }

function sessionOf (reply: SessionReply): Session | null {
  if (reply.role === null) return null
  setCsrfToken(reply.csrf)
  return { role: reply.role, open: !reply.keys, previewUrl: reply.preview_url }
}

/** Where earlier versions of the admin kept the key itself: emptied, so no script can read it. */
const OLD_KEY_STORAGE = 'lectern.apiKey'

/** Whether this browser is signed in already (another tab may have done it). */
export async function detect (): Promise<Detection> {
  try { sessionStorage.removeItem(OLD_KEY_STORAGE) } catch { /* storage disabled: nothing was kept there */ }
  const reply = await request<SessionReply>('GET', '/api/session')
  const session = sessionOf(reply)
  return session === null || (!reply.session && reply.keys) ? { kind: 'needs-key' } : { kind: 'signed-in', session }
}

/** Exchanges `key` for the session cookie; null when the server does not accept the key. */
export async function signIn (key: string): Promise<Session | null> {
  try {
    return sessionOf(await request<SessionReply>('POST', '/api/session', { body: { key } }))
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null
    throw err
  }
}

export async function signOut (): Promise<void> {
  await request<undefined>('DELETE', '/api/session')
  setCsrfToken(null)
}

/** Admin only: a new session secret, so every browser is signed out. */
export async function signOutEverywhere (): Promise<void> {
  await request<undefined>('POST', '/api/session/revoke')
  setCsrfToken(null)
}

export const canWriteContent = (role: Role): boolean => role === 'admin' || role === 'editor'
export const canWriteSchemas = (role: Role): boolean => role === 'admin'
