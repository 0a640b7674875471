// App-wide state handed down through one context: who is signed in, the content scope, the
// collection list (the sidebar), and the message area.
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { Query } from './api.js'
import type { Session } from './session.js'
import type { CollectionSummary, Locales } from './types.js'

export interface Scope {
  /** The chosen locale, or null for the server's default (or when locales are off). */
  locale: string | null
  /** The chosen environment, or null for the server's default. */
  environment: string | null
}

export type NoticeKind = 'success' | 'error' | 'info'

export interface AppState {
  session: Session
  scope: Scope
  locales: Locales
  /** The server's default environment's name (GET /api/environments), what a null scope.environment means. */
  defaultEnvironment: string
  /** Content collections (reusable schemas are left out by the server); null while loading. */
  collections: CollectionSummary[] | null
  reloadCollections: () => void
  notify: (message: string, kind?: NoticeKind) => void
  /** Back to the sign-in page, with a message (the session is already over). */
  signOut: (message: string | null) => void
}

export const AppContext = createContext<AppState | null>(null)

export function useApp (): AppState {
  const state = useContext(AppContext)
  if (state === null) throw new Error('useApp outside the app')
  return state
}

/** `_locale` and `_environment` for a request in the given scope. */
export function scopeQuery (scope: Scope): Query {
  return { _locale: scope.locale, _environment: scope.environment }
}
