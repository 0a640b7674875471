// The schema registry over a types directory: loads every schema file, resolves `extends`,
// compiles a CollectionModel per content collection, and performs schema writes (interface.md
// "Schemas (write)", rules 2 to 9) one at a time, recompiling only what a write affects.
import path from 'node:path'
import { badRequest, conflict, internal, notFound, validationFailed } from '../errors.js'
import type { CollectionModel, ResolvedSchema, SchemaDefinition, SchemaRegistry } from '../../types/schema.js'
import { compileCollection } from './compile.js'
import { checkDefinition } from './definition.js'
import { SchemaFiles } from './files.js'
import { interpretSchemaText, type Notation } from './parse.js'
import { resolvedProblems, resolveSchemas } from './resolve.js'
import { SCHEMA_NAME_MAX_LENGTH, isJsonObject, isSchemaName, schemaNameProblem } from './rules.js'

/** The part of a pino logger the registry uses. */
export interface RegistryLogger {
  info: (obj: object, msg: string) => void
  warn: (obj: object, msg: string) => void
  error: (obj: object, msg: string) => void
}

/**
 * Serializes schema writes among every process sharing the types directory (contract §12: a
 * PostgreSQL advisory lock, lib/cluster/write-lock.ts). Without one, the registry's own queue
 * serializes the writes of this process, the only writer (the data dir's lock).
 */
export interface SchemaWriteLock {
  run: <T>(task: () => Promise<T>) => Promise<T>
}

export interface RegistryOptions {
  typesDir: string
  log: RegistryLogger
  /** Given when other processes write the same types directory. */
  lock?: SchemaWriteLock
}

interface KnownSchema {
  name: string
  /** The file in use (`.json5` when both exist). */
  file: string
  notation: Notation
  /** Null when the file is readable but not a valid definition. */
  definition: SchemaDefinition | null
  errors: string[]
}

function invalidName (name: unknown): Error {
  const problem = schemaNameProblem(name) ?? 'is not valid'
  return badRequest(`Invalid schema name ${JSON.stringify(name) ?? ''}: it ${problem} (lowercase letters, digits and underscores, 1 to ${SCHEMA_NAME_MAX_LENGTH} characters).`)
}

export class SchemaFileRegistry implements SchemaRegistry {
  private readonly files: SchemaFiles
  private readonly log: RegistryLogger
  /** Every readable schema file, by name. */
  private known = new Map<string, KnownSchema>()
  private resolved = new Map<string, ResolvedSchema>()
  private models = new Map<string, CollectionModel>()
  /** Why a schema is left out (invalid definition, unknown parent, cycle). */
  private leftOut = new Map<string, string[]>()
  /** Writes run one at a time, in arrival order. */
  private queue: Promise<unknown> = Promise.resolve()
  private readonly lock: SchemaWriteLock | undefined

  constructor (options: RegistryOptions) {
    this.files = new SchemaFiles(options.typesDir)
    this.log = options.log
    this.lock = options.lock
  }

  /**
   * Reads the whole types directory (start-up), after removing the temp files of interrupted
   * writes: holding the lock when the directory is shared, so no other process's write is in the
   * middle of one. Problems are logged; the schemas concerned are left out.
   */
  async load (): Promise<void> {
    const start = async (): Promise<void> => {
      const stale = await this.files.removeStaleTempFiles()
      if (stale > 0) this.log.warn({ count: stale }, 'removed temp files of interrupted schema writes')
      await this.read()
    }
    await (this.lock === undefined ? start() : this.lock.run(start))
    this.log.info({ schemas: this.known.size, collections: this.models.size }, 'schemas loaded')
  }

  /** Reads every schema file into a map of its own: the schemas in use stay until the new ones are read. */
  private async read (): Promise<void> {
    const { files, ignored } = await this.files.list()
    for (const file of ignored) {
      this.log.warn({ file }, 'schema file ignored: its name is not a valid schema name (lowercase letters, digits, underscores)')
    }
    const known = new Map<string, KnownSchema>()
    for (const [name, file] of files) {
      const found = await this.files.read(name)
      if (found === null) continue
      const result = interpretSchemaText(found.text, name)
      if (result.kind === 'unreadable') {
        this.log.warn({ schema: name, file: path.basename(file) }, `schema file skipped: it ${result.problem}`)
        continue
      }
      known.set(name, {
        name,
        file,
        notation: result.notation,
        definition: result.kind === 'valid' ? result.definition : null,
        errors: result.kind === 'invalid' ? result.errors : []
      })
    }
    this.known = known
    this.rebuild(null)
  }

  /**
   * Reads the whole types directory again, between writes (another process sharing the directory
   * wrote to it: contract §12). Each file is replaced whole (a rename), so no lock is needed to
   * read; temp files are left alone: they may be another process's write in progress.
   */
  async reload (): Promise<void> {
    await this.exclusive(async () => { await this.read() })
  }

  /** Resolves in one go and recompiles the collections a change touches (all when `changed` is null). */
  private rebuild (changed: ReadonlySet<string> | null, compiled?: CollectionModel): void {
    const definitions = new Map<string, SchemaDefinition>()
    const invalid = new Set<string>()
    const leftOut = new Map<string, string[]>()
    for (const known of this.known.values()) {
      if (known.definition !== null) definitions.set(known.name, known.definition)
      else {
        invalid.add(known.name)
        leftOut.set(known.name, known.errors)
      }
    }
    const resolution = resolveSchemas(definitions, invalid)
    for (const [name, errors] of resolution.errors) leftOut.set(name, errors)

    const models = new Map<string, CollectionModel>()
    for (const [name, schema] of resolution.resolved) {
      if (schema.reusable) continue
      const lineage = resolution.ancestors.get(name) ?? new Set<string>()
      const affected = changed === null || changed.has(name) || [...lineage].some(a => changed.has(a))
      const existing = this.models.get(name)
      if (!affected && existing !== undefined) {
        models.set(name, existing)
        continue
      }
      if (compiled !== undefined && compiled.schema.name === name) {
        models.set(name, compiled)
        continue
      }
      try {
        models.set(name, compileCollection(schema))
      } catch (err) {
        leftOut.set(name, [`(schema): cannot be compiled: ${err instanceof Error ? err.message : String(err)}`])
      }
    }

    for (const [name, errors] of leftOut) {
      const before = this.leftOut.get(name)
      if (before === undefined || before.join('\n') !== errors.join('\n')) {
        this.log.warn({ schema: name, errors }, `schema '${name}' is left out: ${errors.join('; ')}`)
      }
    }
    this.resolved = resolution.resolved
    this.models = models
    this.leftOut = leftOut
  }

  private exclusive<T> (task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task)
    this.queue = run.catch(() => {})
    return run
  }

  /**
   * A write: after this process's earlier ones and, with a shared types directory, holding the
   * lock of every process, deciding against the directory as it is now (read again first: another
   * process may have written since, its announcement still on the way).
   */
  private write<T> (task: () => Promise<T>): Promise<T> {
    const lock = this.lock
    if (lock === undefined) return this.exclusive(task)
    return this.exclusive(async () => await lock.run(async () => {
      await this.read()
      return await task()
    }))
  }

  /** Resolves when every queued write has finished (used at shutdown and by tests). */
  async idle (): Promise<void> {
    await this.queue
  }

  names (): string[] {
    return [...this.known.keys()].sort()
  }

  collection (name: string): CollectionModel | null {
    return this.models.get(name) ?? null
  }

  collections (): CollectionModel[] {
    return [...this.models.keys()].sort().map(name => this.models.get(name) as CollectionModel)
  }

  /** The resolved form of any schema, reusable ones included; null when unknown or unresolvable. */
  resolvedSchema (name: string): ResolvedSchema | null {
    return this.resolved.get(name) ?? null
  }

  /** Why a schema is left out of the collections, or an empty list. */
  problems (name: string): string[] {
    return this.leftOut.get(name) ?? []
  }

  async readRaw (name: string): Promise<Record<string, unknown>> {
    if (!isSchemaName(name)) throw invalidName(name)
    const found = await this.io(() => this.files.read(name), 'read')
    if (found === null) throw notFound(`Schema '${name}' not found.`)
    const result = interpretSchemaText(found.text, name)
    if (result.kind === 'unreadable') throw badRequest(`The stored schema file '${path.basename(found.file)}' ${result.problem}.`)
    return result.raw
  }

  async create (input: unknown): Promise<SchemaDefinition> {
    const definition = this.checkWrite(input)
    // Rule 3: a new schema is a collection; partials are made by editing files or by PUT.
    if (definition.reusable === true) throw badRequest('reusable must not be true when creating a schema.')
    this.checkFields(definition)
    return await this.write(async () => {
      const name = definition.name
      if (await this.io(() => this.files.locate(name), 'read') !== null) {
        throw conflict(`A schema named '${name}' already exists; use PUT /api/schemas/${name} to change it.`)
      }
      const model = this.checkResolution(definition)
      const file = this.files.jsonPath(name)
      await this.io(() => this.files.write(file, definition), 'write')
      this.known.set(name, { name, file, notation: 'native', definition, errors: [] })
      this.rebuild(new Set([name]), model)
      return definition
    })
  }

  async update (name: string, input: unknown): Promise<SchemaDefinition> {
    const definition = this.checkWrite(input)
    this.checkFields(definition)
    // Rule 5: the path names the schema being replaced.
    if (definition.name !== name) {
      throw badRequest(`The schema name '${definition.name}' differs from the name in the path ${JSON.stringify(name)}.`)
    }
    return await this.write(async () => {
      // Rule 6 and 9: the existing file is rewritten, `.json5` before `.json`.
      const file = await this.io(() => this.files.locate(name), 'read')
      if (file === null) throw notFound(`Schema '${name}' not found.`)
      const model = this.checkResolution(definition)
      await this.io(() => this.files.write(file, definition), 'write')
      this.known.set(name, { name, file, notation: 'native', definition, errors: [] })
      this.rebuild(new Set([name]), model)
      return definition
    })
  }

  async remove (name: string): Promise<void> {
    if (!isSchemaName(name)) throw invalidName(name)
    await this.write(async () => {
      const removed = await this.io(() => this.files.remove(name), 'delete')
      if (!removed) throw notFound(`Schema '${name}' not found.`)
      this.known.delete(name)
      this.rebuild(new Set([name]))
    })
  }

  /** Rule 2: a JSON object with a valid `name`. */
  private checkWrite (input: unknown): SchemaDefinition & Record<string, unknown> {
    if (!isJsonObject(input)) throw badRequest('The schema definition must be a JSON object.')
    if (!isSchemaName(input.name)) throw invalidName(input.name)
    return input as SchemaDefinition & Record<string, unknown>
  }

  /** Rule 4 and every other definition problem: one message per problem, naming the field. */
  private checkFields (definition: SchemaDefinition): void {
    const errors = checkDefinition(definition)
    if (errors.length > 0) throw validationFailed(errors)
  }

  /** Resolves the written schema against the others: unknown parent or cycle → 422 under `extends`. */
  private checkResolution (definition: SchemaDefinition): CollectionModel | undefined {
    const definitions = new Map<string, SchemaDefinition>()
    const invalid = new Set<string>()
    for (const known of this.known.values()) {
      if (known.name === definition.name) continue
      if (known.definition !== null) definitions.set(known.name, known.definition)
      else invalid.add(known.name)
    }
    definitions.set(definition.name, definition)
    const resolution = resolveSchemas(definitions, invalid)
    const errors = resolution.errors.get(definition.name)
    if (errors !== undefined) throw validationFailed(errors)
    const schema = resolution.resolved.get(definition.name) as ResolvedSchema
    const problems = resolvedProblems(schema)
    if (problems.length > 0) throw validationFailed(problems)
    if (schema.reusable) return undefined
    try {
      return compileCollection(schema)
    } catch (err) {
      throw validationFailed([`(schema): cannot be compiled: ${err instanceof Error ? err.message : String(err)}`])
    }
  }

  /** File-system failures become a generic 500; the details (paths) go to the log only. */
  private async io<T> (task: () => Promise<T>, what: 'read' | 'write' | 'delete'): Promise<T> {
    try {
      return await task()
    } catch (err) {
      this.log.error({ err }, `schema file ${what} failed`)
      throw internal()
    }
  }
}
