// `lectern types` (contract §16): the declarations of every collection, from the schema files
// of a types directory, by the generator of the OpenAPI document's per-collection schemas.
import { SchemaFileRegistry } from '../schema/registry.js'
import { declarations } from '../openapi/typescript.js'

/** The declarations for the schemas in `typesDir`; each schema left out is reported through `warn`. */
export async function typesFor (typesDir: string, warn: (message: string) => void): Promise<string> {
  const say = (obj: object, msg: string): void => { warn(`${msg} ${JSON.stringify(obj)}`) }
  const registry = new SchemaFileRegistry({ typesDir, log: { info: () => {}, warn: say, error: say } })
  await registry.load()
  return declarations(registry.collections().map(m => m.schema))
}
