// Reading a schema document: JSON5 text (JSON is JSON5), in native or JSON Schema notation.
import JSON5 from 'json5'
import type { SchemaDefinition } from '../../types/schema.js'
import { checkDefinition } from './definition.js'
import { fromJsonSchema, isJsonSchemaDocument } from './json-schema.js'
import { isJsonObject } from './rules.js'

/** Both `.json5` and `.json` files are read with the JSON5 parser. Throws a SyntaxError. */
export function parseSchemaText (text: string): unknown {
  return JSON5.parse(text)
}

export type Notation = 'native' | 'json-schema'

export type Interpretation =
  /** The file cannot serve as a schema at all: unparsable, not an object, or its `name` differs. */
  | { kind: 'unreadable', problem: string }
  /** Readable (its raw form can be served) but not a valid definition. */
  | { kind: 'invalid', raw: Record<string, unknown>, notation: Notation, errors: string[] }
  | { kind: 'valid', raw: Record<string, unknown>, notation: Notation, definition: SchemaDefinition }

/** Interprets the text of `<name>.json5` / `<name>.json`; the name is the file's. */
export function interpretSchemaText (text: string, name: string): Interpretation {
  let doc: unknown
  try {
    doc = parseSchemaText(text)
  } catch (err) {
    return { kind: 'unreadable', problem: `cannot be parsed: ${err instanceof Error ? err.message : String(err)}` }
  }
  return interpretDocument(doc, name)
}

export function interpretDocument (doc: unknown, name: string): Interpretation {
  if (!isJsonObject(doc)) return { kind: 'unreadable', problem: 'is not a JSON object' }
  if (isJsonSchemaDocument(doc)) {
    const { definition, errors } = fromJsonSchema(doc, name)
    const all = [...errors, ...checkDefinition(definition)]
    return all.length > 0
      ? { kind: 'invalid', raw: doc, notation: 'json-schema', errors: all }
      : { kind: 'valid', raw: doc, notation: 'json-schema', definition: definition as unknown as SchemaDefinition }
  }
  if (doc.name !== name) {
    return { kind: 'unreadable', problem: `has the name ${JSON.stringify(doc.name) ?? 'undefined'}, not '${name}'` }
  }
  const errors = checkDefinition(doc)
  return errors.length > 0
    ? { kind: 'invalid', raw: doc, notation: 'native', errors }
    : { kind: 'valid', raw: doc, notation: 'native', definition: doc as unknown as SchemaDefinition }
}
