// A field-level comparison of two states of an entry, for the history's side-by-side view: one
// row per field either side has, in the schema's order, each value pretty-printed as JSON.

export interface FieldChange {
  field: string
  left: string
  right: string
  changed: boolean
}

/** System fields that differ between any two writes and say nothing about the content. */
const IGNORED = new Set(['_slug', '_created_at', '_updated_at', '_version'])

/** A value as the diff shows it: absent is "(none)", strings as JSON strings, objects indented. */
export function showValue (value: unknown): string {
  return value === undefined ? '(none)' : JSON.stringify(value, null, 2)
}

/** Equal as JSON values (object key order ignored). */
export function sameValue (a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameValue(item, b[i]))
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  const keys = new Set([...Object.keys(left), ...Object.keys(right)])
  for (const key of keys) if (!sameValue(left[key], right[key])) return false
  return true
}

/** Rows for every field of `order` first (the schema's), then any other field either side has. */
export function diffFields (left: Record<string, unknown>, right: Record<string, unknown>, order: string[] = []): FieldChange[] {
  const names = [...new Set(['_status', ...order, ...Object.keys(left), ...Object.keys(right)])]
    .filter(name => !IGNORED.has(name) && (name in left || name in right))
  return names.map(field => ({
    field,
    left: showValue(left[field]),
    right: showValue(right[field]),
    changed: !sameValue(left[field], right[field])
  }))
}

/** True when some content field differs (status and system fields left aside). */
export function contentDiffers (a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return diffFields(a, b).some(row => row.changed && row.field !== '_status')
}
