// `extends` resolution (contract §5 "Schema document"): parents first in list order, a child's
// field of the same name replaces the parent's, strict when any ancestor is. Unknown parents and
// cycles are reported under `extends`.
import type { FieldDefinition, ResolvedSchema, SchemaDefinition } from '../../types/schema.js'
import { SORTABLE_SYSTEM_FIELDS } from './rules.js'

export interface Resolution {
  /** Every schema that resolved, reusable ones included. */
  resolved: Map<string, ResolvedSchema>
  /** Why a schema did not resolve (messages start with `extends:`). */
  errors: Map<string, string[]>
  /** Every ancestor of each resolved schema, transitively. */
  ancestors: Map<string, Set<string>>
}

export function parentsOf (definition: SchemaDefinition): string[] {
  const value = definition.extends
  if (value === undefined || value === null) return []
  return Array.isArray(value) ? value : [value]
}

/** The path from `name` back to itself through `extends`, or null when `name` is on no cycle. */
function findCycle (name: string, definitions: ReadonlyMap<string, SchemaDefinition>): string[] | null {
  const visited = new Set<string>()
  const walk = (current: string, path: string[]): string[] | null => {
    const definition = definitions.get(current)
    if (definition === undefined) return null
    for (const parent of parentsOf(definition)) {
      if (parent === name) return [...path, parent]
      if (visited.has(parent)) continue
      visited.add(parent)
      const found = walk(parent, [...path, parent])
      if (found !== null) return found
    }
    return null
  }
  return walk(name, [name])
}

function resolvedForm (definition: SchemaDefinition, fields: Record<string, FieldDefinition>, strict: boolean): ResolvedSchema {
  return {
    name: definition.name,
    label: definition.label ?? null,
    description: definition.description ?? null,
    extends: definition.extends ?? null,
    reusable: definition.reusable === true,
    strict,
    tags: definition.tags ?? [],
    category: definition.category ?? null,
    default_sort: definition.default_sort ?? null,
    default_order: definition.default_order ?? null,
    display_field: definition.display_field ?? null,
    fields
  }
}

/**
 * Resolves every definition. `invalid` names schemas whose files exist but whose definitions
 * are not valid, so that extending one says so instead of "unknown".
 */
export function resolveSchemas (
  definitions: ReadonlyMap<string, SchemaDefinition>,
  invalid: ReadonlySet<string> = new Set()
): Resolution {
  const resolved = new Map<string, ResolvedSchema>()
  const errors = new Map<string, string[]>()
  const ancestors = new Map<string, Set<string>>()

  for (const name of definitions.keys()) {
    const cycle = findCycle(name, definitions)
    if (cycle !== null) errors.set(name, [`extends: cycle ${cycle.join(' → ')}`])
  }

  const resolve = (name: string): ResolvedSchema | null => {
    const done = resolved.get(name)
    if (done !== undefined) return done
    if (errors.has(name)) return null
    const definition = definitions.get(name)
    if (definition === undefined) return null

    const problems: string[] = []
    const fields: Record<string, FieldDefinition> = {}
    const lineage = new Set<string>()
    let strict = definition.strict === true
    for (const parent of parentsOf(definition)) {
      if (!definitions.has(parent)) {
        problems.push(invalid.has(parent)
          ? `extends: schema '${parent}' is not a valid schema`
          : `extends: unknown schema '${parent}'`)
        continue
      }
      const resolvedParent = resolve(parent)
      if (resolvedParent === null) {
        problems.push(`extends: schema '${parent}' cannot be resolved (${(errors.get(parent) ?? []).join('; ')})`)
        continue
      }
      Object.assign(fields, resolvedParent.fields)
      strict ||= resolvedParent.strict
      lineage.add(parent)
      for (const a of ancestors.get(parent) ?? []) lineage.add(a)
    }
    if (problems.length > 0) {
      errors.set(name, problems)
      return null
    }
    Object.assign(fields, definition.fields)
    const schema = resolvedForm(definition, structuredClone(fields), strict)
    resolved.set(name, schema)
    ancestors.set(name, lineage)
    return schema
  }

  for (const name of [...definitions.keys()].sort()) resolve(name)
  return { resolved, errors, ancestors }
}

function fieldAt (fields: Record<string, FieldDefinition>, path: string): FieldDefinition | undefined {
  let current: Record<string, FieldDefinition> | undefined = fields
  let found: FieldDefinition | undefined
  for (const segment of path.split('.')) {
    if (current === undefined || !Object.hasOwn(current, segment)) return undefined
    found = current[segment]
    current = found?.field_type === 'object' ? found.fields : undefined
  }
  return found
}

/**
 * Checks that only make sense on the resolved form: `default_sort` and `display_field` name a
 * field the schema has (possibly inherited). Applied to schema writes.
 */
export function resolvedProblems (schema: ResolvedSchema): string[] {
  const problems: string[] = []
  const sort = schema.default_sort
  if (typeof sort === 'string' && !SORTABLE_SYSTEM_FIELDS.includes(sort)) {
    const field = fieldAt(schema.fields, sort)
    if (field === undefined) problems.push(`default_sort: '${sort}' is not a field of this schema`)
    else if (['object', 'array', 'json'].includes(field.field_type)) problems.push(`default_sort: '${sort}' is a ${field.field_type} field and cannot be sorted by`)
  }
  const display = schema.display_field
  if (typeof display === 'string' && display !== '_slug' && fieldAt(schema.fields, display) === undefined) {
    problems.push(`display_field: '${display}' is not a field of this schema`)
  }
  return problems
}
