// State shared by every field of one entry form, and the value helpers the form needs.
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { Scope } from '../context.js'
import type { FieldDefinition } from '../types.js'

export interface FormState {
  /** A viewer, or a save in flight: nothing can be edited. */
  disabled: boolean
  /** Creating (defaults and `auto` apply) rather than updating (readonly fields are fixed). */
  isNew: boolean
  scope: Scope
  /** Server messages by the rendered field path they belong to. */
  errors: ReadonlyMap<string, string[]>
  /** Problems the browser found itself (unparsable JSON), by field path; null clears. */
  setLocalError: (path: string, message: string | null) => void
}

export const FormContext = createContext<FormState | null>(null)

export function useForm (): FormState {
  const state = useContext(FormContext)
  if (state === null) throw new Error('a field outside a form')
  return state
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A field's path under its parent: dotted names, array items by index. */
export const childPath = (parent: string, name: string | number): string => parent === '' ? String(name) : `${parent}.${name}`

/**
 * Every path the form renders a field for, given the current values: the places a server
 * message can be shown beside.
 */
export function renderedPaths (fields: Record<string, FieldDefinition>, value: unknown, parent = '', out = new Set<string>()): Set<string> {
  const data = isRecord(value) ? value : {}
  for (const [name, def] of Object.entries(fields)) {
    const path = childPath(parent, name)
    out.add(path)
    addNested(def, data[name], path, out)
  }
  return out
}

function addNested (def: FieldDefinition, value: unknown, path: string, out: Set<string>): void {
  if (def.field_type === 'object' && def.fields !== undefined) renderedPaths(def.fields, value, path, out)
  if (def.field_type === 'array' && Array.isArray(value)) {
    value.forEach((item, i) => {
      const itemPath = childPath(path, i)
      out.add(itemPath)
      if (def.items !== undefined) addNested(def.items, item, itemPath, out)
    })
  }
  if ((def.field_type === 'multiselect' || (def.field_type === 'reference' && def.multiple === true)) && Array.isArray(value)) {
    value.forEach((_item, i) => { out.add(childPath(path, i)) })
  }
}

/** The path of a server message (`"layout.mobile: must be ..."`, `"items[0].name: ..."`), normalized to dots. */
export function messagePath (message: string): { path: string, text: string } | null {
  const colon = message.indexOf(': ')
  if (colon <= 0) return null
  const raw = message.slice(0, colon).trim()
  if (/\s/.test(raw)) return null
  const path = raw
    .replace(/\[(\d+)\]/g, '.$1')
    .replace(/\//g, '.')
    .replace(/^\.+|\.+$/g, '')
    .replace(/^(body|data)\./, '')
  return { path, text: message.slice(colon + 2) }
}

/** Each message goes to the deepest rendered field on its path; the rest stay form-level only. */
export function placeMessages (messages: string[], paths: Set<string>): Map<string, string[]> {
  const placed = new Map<string, string[]>()
  for (const message of messages) {
    const parsed = messagePath(message)
    if (parsed === null) continue
    const parts = parsed.path.split('.')
    for (let n = parts.length; n > 0; n--) {
      const candidate = parts.slice(0, n).join('.')
      if (paths.has(candidate)) {
        const text = n === parts.length ? parsed.text : `${parts.slice(n).join('.')}: ${parsed.text}`
        placed.set(candidate, [...(placed.get(candidate) ?? []), text])
        break
      }
    }
  }
  return placed
}

/** Values for a new entry: the schema's top-level defaults (the server applies the same ones). */
export function initialValues (fields: Record<string, FieldDefinition>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, def] of Object.entries(fields)) {
    if (def.default !== undefined) out[name] = structuredClone(def.default)
  }
  return out
}

/**
 * The body to send: absent instead of empty, optional objects left out when nothing in them
 * was filled (so untouched groups do not trip their own required fields).
 */
export function prune (fields: Record<string, FieldDefinition>, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, raw] of Object.entries(value)) {
    const def = fields[name]
    const cleaned = def === undefined ? raw : pruneValue(def, raw)
    if (cleaned !== undefined) out[name] = cleaned
  }
  return out
}

function pruneValue (def: FieldDefinition, value: unknown): unknown {
  if (value === undefined || value === '') return undefined
  if (def.field_type === 'object' && isRecord(value)) {
    const inner = prune(def.fields ?? {}, value)
    return Object.keys(inner).length === 0 && def.required !== true ? undefined : inner
  }
  if (def.field_type === 'array' && Array.isArray(value)) {
    const items = def.items
    return value.map(item => {
      if (items === undefined) return item
      const cleaned = pruneValue(items, item)
      // Keep positions: an emptied object item stays an (invalid, reported) empty object.
      return cleaned === undefined ? (items.field_type === 'object' ? {} : null) : cleaned
    })
  }
  return value
}

/** An ISO date-time as the value of <input type="datetime-local"> in the browser's zone. */
export function toLocalInput (iso: unknown): string {
  if (typeof iso !== 'string' || iso === '') return ''
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return ''
  const pad = (n: number): string => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}

/** The inverse: the local wall time with the zone's offset written out (ISO 8601 with offset). */
export function fromLocalInput (local: string): string | undefined {
  if (local === '') return undefined
  const date = new Date(local)
  if (Number.isNaN(date.getTime())) return undefined
  const offset = -date.getTimezoneOffset()
  const sign = offset >= 0 ? '+' : '-'
  const abs = Math.abs(offset)
  const pad = (n: number): string => String(n).padStart(2, '0')
  const base = local.length === 16 ? `${local}:00` : local.slice(0, 19)
  return `${base}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
}
