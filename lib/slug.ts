// Slug rules (contract §4 "Slugs", interface.md "Slug check").

export const SLUG_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/
export const SLUG_MAX_LENGTH = 200

/** A slug already in normal form: lowercase letters, digits and single hyphens, no path characters. */
export function isNormalSlug (value: unknown): value is string {
  return typeof value === 'string' && value.length <= SLUG_MAX_LENGTH && SLUG_RE.test(value)
}

export const SLUG_ERRORS = {
  empty: 'Slug must not be empty.',
  path: 'Slug must not contain path characters (/, \\ or ..).',
  invalid: 'Slug may only contain letters, digits, spaces, hyphens and underscores.',
  tooLong: `Slug must be at most ${SLUG_MAX_LENGTH} characters.`,
  generic: 'Slug is not valid.'
} as const

export interface SlugCheck {
  valid: boolean
  normalized: string
  error: string | null
}

/** Trim, lowercase, NFKD without diacritics, spaces/underscores → hyphen, collapse and trim hyphens. */
export function normalizeSlug (input: string): string {
  return input
    .trim()
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[\s_]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-+|-+$/g, '')
}

export function hasPathCharacters (input: string): boolean {
  return input.includes('/') || input.includes('\\') || input.includes('..')
}

/** Validates and normalizes; path characters are rejected before normalization. */
export function checkSlug (input: unknown): SlugCheck {
  if (typeof input !== 'string' || input.trim() === '') {
    return { valid: false, normalized: '', error: SLUG_ERRORS.empty }
  }
  if (hasPathCharacters(input)) {
    return { valid: false, normalized: normalizeSlug(input), error: SLUG_ERRORS.path }
  }
  const normalized = normalizeSlug(input)
  if (normalized === '') return { valid: false, normalized, error: SLUG_ERRORS.invalid }
  if (!SLUG_RE.test(normalized)) return { valid: false, normalized, error: SLUG_ERRORS.invalid }
  if (normalized.length > SLUG_MAX_LENGTH) return { valid: false, normalized, error: SLUG_ERRORS.tooLong }
  return { valid: true, normalized, error: null }
}

/**
 * A file name normalized like a slug, keeping its (lowercased) extension: "My Photo.JPG" → "my-photo.jpg".
 * Returns null when nothing usable is left.
 */
export function normalizeFileName (name: string): string | null {
  const base = name.replace(/^.*[\\/]/, '')
  const dot = base.lastIndexOf('.')
  const stem = dot > 0 ? base.slice(0, dot) : base
  const ext = dot > 0 ? base.slice(dot + 1).toLowerCase().replace(/[^a-z0-9]/g, '') : ''
  const slug = normalizeSlug(stem.replace(/[^\p{L}\p{N}\s_-]+/gu, '-'))
  const safe = slug.replace(/[^a-z0-9-]/g, '').replace(/-+/g, '-').replace(/^-+|-+$/g, '').slice(0, SLUG_MAX_LENGTH)
  if (safe === '') return null
  return ext === '' ? safe : `${safe}.${ext}`
}
