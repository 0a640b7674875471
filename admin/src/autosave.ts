// The local autosave: unsaved edits of an entry are copied to localStorage as they are made, one
// copy per entry, environment and locale, so a crash or a closed tab loses nothing. A save (or a
// delete, or "Discard") removes the copy; the editor offers to bring one back when it finds it.
import type { Scope } from './context.js'

const PREFIX = 'lectern.autosave:'

export interface Autosaved {
  values: Record<string, unknown>
  /** The slug typed for a new entry. */
  slug: string
  /** When the copy was made (ISO). */
  savedAt: string
}

export function autosaveKey (collection: string, slug: string | null, scope: Scope): string {
  return PREFIX + JSON.stringify([collection, slug, scope.environment, scope.locale])
}

export function readAutosave (key: string): Autosaved | null {
  try {
    const raw = localStorage.getItem(key)
    if (raw === null) return null
    const parsed = JSON.parse(raw) as Partial<Autosaved>
    if (typeof parsed.values !== 'object' || parsed.values === null || typeof parsed.savedAt !== 'string') return null
    return { values: parsed.values, slug: typeof parsed.slug === 'string' ? parsed.slug : '', savedAt: parsed.savedAt }
  } catch {
    return null
  }
}

export function writeAutosave (key: string, values: Record<string, unknown>, slug: string): void {
  try {
    localStorage.setItem(key, JSON.stringify({ values, slug, savedAt: new Date().toISOString() }))
  } catch { /* storage full or disabled: the leave guard still protects the edits */ }
}

export function clearAutosave (key: string): void {
  try { localStorage.removeItem(key) } catch { /* storage disabled: nothing was kept */ }
}
