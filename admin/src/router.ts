// A tiny History API router. Every screen has a real URL under /admin/ (the server answers
// index.html for deep links), and the scope (`locale`, `env`) rides along in the query string.
import { useEffect, useState } from 'preact/hooks'
import { confirmLeave, hasUnsavedChanges } from './guard.js'

export const BASE = '/admin'
/** Query parameters that every link keeps: the content scope. */
const STICKY = ['locale', 'env'] as const
const CHANGE = 'lectern:navigate'

export interface Route {
  /** Decoded path segments after /admin/. */
  segments: string[]
  query: URLSearchParams
}

export function currentRoute (): Route {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname
  const segments = rest.split('/').filter(s => s !== '').map(s => {
    try { return decodeURIComponent(s) } catch { return s }
  })
  return { segments, query: new URLSearchParams(location.search) }
}

export function useRoute (): Route {
  const [route, setRoute] = useState(currentRoute)
  useEffect(() => {
    const update = (): void => { setRoute(currentRoute()) }
    addEventListener('popstate', update)
    addEventListener(CHANGE, update)
    return () => {
      removeEventListener('popstate', update)
      removeEventListener(CHANGE, update)
    }
  }, [])
  return route
}

export type QueryValues = Record<string, string | number | null | undefined>

/**
 * An admin URL. `segments` are escaped; the sticky scope parameters of the current URL are
 * kept unless `query` sets them (null removes one).
 */
export function href (segments: string[], query: QueryValues = {}): string {
  const params = new URLSearchParams()
  const current = new URLSearchParams(location.search)
  for (const name of STICKY) {
    const value = current.get(name)
    if (value !== null && !(name in query)) params.set(name, value)
  }
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value))
  }
  const path = `${BASE}/${segments.map(encodeURIComponent).join('/')}`
  const qs = params.toString()
  return qs === '' ? path : `${path}?${qs}`
}

// Each history entry of the app carries its position, so that Back or Forward over unsaved
// changes can be undone (by the same distance) while the editor is asked.
let position = typeof history.state?.idx === 'number' ? history.state.idx as number : 0
if (typeof history.state?.idx !== 'number') history.replaceState({ idx: position }, '')
/** The next popstate is the guard's own move: back to where the editor was, or on once confirmed. */
let ownMove: 'undo' | 'redo' | null = null

addEventListener('popstate', event => {
  const to = typeof (event.state as { idx?: unknown } | null)?.idx === 'number' ? (event.state as { idx: number }).idx : 0
  const delta = to - position
  if (ownMove === 'undo') {
    // Registered before any route listener: they never see the move that is being undone.
    ownMove = null
    event.stopImmediatePropagation()
    return
  }
  if (ownMove === 'redo' || !hasUnsavedChanges() || delta === 0) {
    ownMove = null
    position = to
    return
  }
  event.stopImmediatePropagation()
  ownMove = 'undo'
  history.go(-delta)
  void confirmLeave().then(leave => {
    if (!leave) return
    ownMove = 'redo'
    history.go(delta)
  })
})

/** Programmatic navigation (after a save or a delete): no question asked. */
export function navigate (url: string, options: { replace?: boolean } = {}): void {
  if (url === location.pathname + location.search) return
  if (options.replace === true) history.replaceState({ idx: position }, '', url)
  else history.pushState({ idx: ++position }, '', url)
  dispatchEvent(new Event(CHANGE))
}

/** A navigation the editor asked for (a link, a picker): unsaved changes are confirmed first. */
export async function guardedNavigate (url: string): Promise<void> {
  if (await confirmLeave()) navigate(url)
}

function withChanges (changes: QueryValues): string {
  const params = new URLSearchParams(location.search)
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === null || value === '') params.delete(name)
    else params.set(name, String(value))
  }
  const qs = params.toString()
  return qs === '' ? location.pathname : `${location.pathname}?${qs}`
}

/**
 * Same path, some query parameters changed (null removes). A new history entry by default, so
 * Back and Forward walk through list states; `replace` for changes that are no step (typing).
 */
export function setQuery (changes: QueryValues, options: { replace?: boolean } = {}): void {
  navigate(withChanges(changes), options)
}

/** setQuery for a change of scope (locale, environment): unsaved changes are confirmed first. */
export function guardedSetQuery (changes: QueryValues): void {
  void guardedNavigate(withChanges(changes))
}

/** Click handler for in-app links: plain left clicks navigate without a reload. */
export function onLinkClick (event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  const anchor = (event.currentTarget as HTMLElement).closest('a')
  if (anchor === null || anchor.target !== '' || anchor.origin !== location.origin) return
  event.preventDefault()
  void guardedNavigate(anchor.pathname + anchor.search)
}
