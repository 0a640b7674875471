// A tiny History API router. Every screen has a real URL under /admin/ (the server answers
// index.html for deep links), and the scope (`locale`, `env`) rides along in the query string.
import { useEffect, useState } from 'preact/hooks'

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

export function navigate (url: string, options: { replace?: boolean } = {}): void {
  if (url === location.pathname + location.search) return
  if (options.replace === true) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  dispatchEvent(new Event(CHANGE))
}

/** Same path, some query parameters changed (null removes); replaces the history entry by default. */
export function setQuery (changes: QueryValues, options: { replace?: boolean } = { replace: true }): void {
  const params = new URLSearchParams(location.search)
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === null || value === '') params.delete(name)
    else params.set(name, String(value))
  }
  const qs = params.toString()
  navigate(qs === '' ? location.pathname : `${location.pathname}?${qs}`, options)
}

/** Click handler for in-app links: plain left clicks navigate without a reload. */
export function onLinkClick (event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  const anchor = (event.currentTarget as HTMLElement).closest('a')
  if (anchor === null || anchor.target !== '' || anchor.origin !== location.origin) return
  event.preventDefault()
  navigate(anchor.pathname + anchor.search)
}
