// What the UI derives from a resolved schema: titles, labels, sort choices (list columns and filters: list-state.ts).
import type { Entry, FieldDefinition, ResolvedSchema } from './types.js'

const TITLE_GUESSES = ['title', 'name', 'label', 'headline', 'text', 'internal']
const TEXTUAL = new Set(['string', 'text', 'slug', 'email', 'url'])

/** The field shown as an entry's title: `display_field`, else a likely title field, else none. */
export function displayField (schema: ResolvedSchema): string | null {
  const fields = schema.fields
  if (typeof schema.display_field === 'string' && schema.display_field in fields) return schema.display_field
  for (const guess of TITLE_GUESSES) {
    const def = fields[guess]
    if (def !== undefined && TEXTUAL.has(def.field_type)) return guess
  }
  for (const [name, def] of Object.entries(fields)) if (def.field_type === 'string') return name
  return null
}

export function entryTitle (entry: Entry, field: string | null): string {
  const value = field === null ? undefined : entry[field]
  return typeof value === 'string' && value.trim() !== '' ? value : entry._slug
}

export function fieldLabel (name: string, def: FieldDefinition): string {
  if (typeof def.label === 'string' && def.label !== '') return def.label
  const words = name.replace(/[_-]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').trim()
  return words.charAt(0).toUpperCase() + words.slice(1)
}

export function schemaLabel (schema: { name: string, label?: string | null }): string {
  return typeof schema.label === 'string' && schema.label !== '' ? schema.label : schema.name
}

const SORTABLE = new Set(['string', 'text', 'slug', 'email', 'url', 'number', 'integer', 'boolean', 'date', 'datetime', 'select', 'color'])

/** Fields a list can be sorted by: scalar top-level fields and the system fields. */
export function sortChoices (schema: ResolvedSchema): Array<{ value: string, label: string }> {
  const own = Object.entries(schema.fields)
    .filter(([, def]) => SORTABLE.has(def.field_type))
    .map(([name, def]) => ({ value: name, label: fieldLabel(name, def) }))
  return [
    { value: '_updated_at', label: 'Last updated' },
    { value: '_created_at', label: 'Created' },
    { value: '_slug', label: 'Slug' },
    ...own
  ]
}
