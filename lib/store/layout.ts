// Locales and environments over time (contract §14). Content is stored under its environment and
// its locale ('' when locales are off). When CMS_LOCALES or CMS_ENVIRONMENTS is turned on or off,
// content must neither hide nor get lost: what was written with locales off belongs to the default
// locale once they are on, the default locale's content is what is served once they are off again,
// and other locales' content is kept (still stored under its own locale) and comes back with them.
// Environments alike, the unset setting being the one environment `default`.
//
// Each store remembers the layout it last opened with and, at open, moves the stored content
// (entries, versions, drafts, schedules, change log) from the old default's labels to the new
// one's, in one transaction. This file decides the moves; the stores carry them out.
import { DEFAULT_ENVIRONMENT } from '../../types/scope.js'

/** What decides where unlabelled content lives: the default locale (null: locales off) and the default environment. */
export interface Layout {
  locale: string | null
  environment: string
}

/** One relabelling: every stored thing of that dimension labelled `from` is labelled `to` (locale '' = no locale). */
export interface LayoutMove {
  dimension: 'environment' | 'locale'
  from: string
  to: string
}

/** The layout the settings give: the first configured locale and environment. */
export function layoutOf (options: { locales?: readonly string[], environments?: readonly string[] }): Layout {
  return { locale: options.locales?.[0] ?? null, environment: options.environments?.[0] ?? DEFAULT_ENVIRONMENT }
}

/** The stored text of a layout (what a store keeps in its metadata), and back; null for text it cannot read. */
export function layoutText (layout: Layout): string {
  return JSON.stringify({ locale: layout.locale, environment: layout.environment })
}

export function parseLayout (text: string | null | undefined): Layout | null {
  if (typeof text !== 'string') return null
  try {
    const value = JSON.parse(text) as { locale?: unknown, environment?: unknown }
    const locale = value.locale === null || typeof value.locale === 'string' ? value.locale : undefined
    if (locale === undefined || typeof value.environment !== 'string') return null
    return { locale, environment: value.environment }
  } catch {
    return null
  }
}

/**
 * The moves that bring content stored under `previous` to `current`, environments first (every
 * locale), then locales (every environment, under their new labels). A store that remembers no
 * layout (new, or written before layouts were kept) takes the one of unset settings: moving from
 * a label nothing is stored under does nothing. A changed default with the setting on in both
 * moves nothing: each locale's or environment's content stays its own.
 */
export function layoutMoves (previous: Layout | null, current: Layout): LayoutMove[] {
  const before = previous ?? { locale: null, environment: DEFAULT_ENVIRONMENT }
  const moves: LayoutMove[] = []
  // Environments: unset is the one environment `default`, so "off → on" and "on → off" are both a
  // change of default to or from `default`; between two configured defaults nothing moves.
  if (before.environment !== current.environment && (before.environment === DEFAULT_ENVIRONMENT || current.environment === DEFAULT_ENVIRONMENT)) {
    moves.push({ dimension: 'environment', from: before.environment, to: current.environment })
  }
  if (before.locale === null && current.locale !== null) moves.push({ dimension: 'locale', from: '', to: current.locale })
  if (before.locale !== null && current.locale === null) moves.push({ dimension: 'locale', from: before.locale, to: '' })
  return moves
}
