// The `lectern` command line (contract §16): argument parsing, help, and the exit codes
// (0 success, 1 problems found, 2 usage error). The entry file (cli.ts) hands in how to open a
// data directory, so that this module never imports the server.
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { StoreKind } from '../config.js'
import { writeFileAtomic } from '../durable.js'
import { Api, httpTransport, type Transport } from './api.js'
import { exportAll } from './export.js'
import { exportedSchemas, importEntries, importSchemasOverApi, type ImportReport } from './import.js'
import { Progress, type ProgressStream } from './progress.js'
import { typesFor } from './types.js'
import { validateAll } from './validate.js'

export interface CliContext {
  stdout: ProgressStream
  stderr: ProgressStream
  version: string
  /** The store of a data directory when `--store` is not given (CMS_STORE). */
  defaultStore: StoreKind
  /** Builds the app on a data directory, in this process (no listening). */
  openDataDir: (dataDir: string, store: StoreKind, options?: OpenOptions) => Promise<Transport>
}

export interface OpenOptions {
  /**
   * Writes schema files into the types directory before the app reads it; resolves to whether it
   * wrote any. With PostgreSQL, whose replicas share the directory, it runs under their schema
   * write lock, and what it wrote is announced to them once the app is up.
   */
  writeSchemas?: () => Promise<boolean>
}

const STORE_KINDS: readonly StoreKind[] = ['sqlite', 'file', 'postgres']

class UsageError extends Error {}

const TARGET = {
  server: { type: 'string' },
  key: { type: 'string' },
  'data-dir': { type: 'string' },
  store: { type: 'string' }
} as const

const COMMANDS = {
  export: { ...TARGET, out: { type: 'string' }, status: { type: 'string' }, environment: { type: 'string' }, locales: { type: 'string' }, collections: { type: 'string' }, assets: { type: 'boolean' } },
  import: { ...TARGET, 'dry-run': { type: 'boolean' } },
  types: { 'types-dir': { type: 'string' }, 'data-dir': { type: 'string' }, out: { type: 'string' }, check: { type: 'boolean' } },
  validate: { ...TARGET, environment: { type: 'string' } }
} as const satisfies Record<string, NonNullable<ParseArgsConfig['options']>>

type Command = keyof typeof COMMANDS

const TARGET_HELP = `  --server <url>      a running Lectern (e.g. http://localhost:3000)
  --key <key>         its API key (drafts and writes need one when keys are on)
  --data-dir <dir>    or a data directory, opened in this process (not while a server runs on it with the file
                      store); CMS_LOCALES, CMS_ENVIRONMENTS, CMS_TYPES_DIR, CMS_ASSETS_DIR and CMS_PUBLIC_URL
                      are read from the environment, as the server reads them
  --store <kind>      the data directory's store: sqlite, file or postgres (default: CMS_STORE, else sqlite);
                      postgres reads CMS_DATABASE_URL and CMS_DATABASE_POOL from the environment and
                      works beside running replicas (CMS_TYPES_DIR and CMS_ASSETS_DIR: their shared ones)`

export const HELP: Record<Command | 'main', string> = {
  main: `Usage: lectern <command> [options]

Commands:
  export    write schemas, entries and (optionally) assets to a directory
  import    create or update the entries of an export (deletes nothing)
  types     TypeScript declarations for every collection
  validate  check every entry against its schema and every reference

Run lectern <command> --help for its options. Exit codes: 0 success, 1 problems found, 2 usage error.`,
  export: `Usage: lectern export --out <dir> [--server <url> [--key K] | --data-dir <dir>] [options]

Writes manifest.json, schemas/<name>.json, content/<collection>/<locale or _>/<slug>.json (each the
body of GET on that entry) and index.json (the slugs in default_sort order), and with --assets the files.

${TARGET_HELP}
  --out <dir>             where to write (required)
  --status all|published  which entries (default all; drafts need a key when keys are on)
  --environment <name>    the environment (default: the first)
  --locales all|a,b       which locales (default all)
  --collections a,b       only these collections
  --assets                also the asset files (assets/<folder>/<name>, assets/index.json)`,
  import: `Usage: lectern import <dir> [--server <url> [--key K] | --data-dir <dir>] [--dry-run]

Creates or updates every entry of an export through the normal write rules (schemas first, then
entries in an order that satisfies references); reports counts and every refused entry; deletes
nothing. Missing schemas: written as files with --data-dir, created with POST with --server (a
reusable partial cannot be, and is reported).

${TARGET_HELP}
  --dry-run           say what would be written, write nothing`,
  types: `Usage: lectern types [--types-dir <dir> | --data-dir <dir>] [--out <file>] [--check]

TypeScript declarations for every collection (Entry, Create, Update and Patch types) from the
schema files; printed, or written to --out.

  --types-dir <dir>   the schema files (default <data-dir>/types, else CMS_TYPES_DIR, else data/types)
  --data-dir <dir>    a data directory whose types/ holds them
  --out <file>        write there instead of printing
  --check             write nothing; exit 1 when <file> is not up to date`,
  validate: `Usage: lectern validate [--data-dir <dir> | --server <url> [--key K]]

Checks every stored entry against its collection's current schema and every reference; lists
each problem; exit 1 when any.

${TARGET_HELP}
  --environment <name>  the environment (default: the first)`
}

type Values = Record<string, string | boolean | undefined>

function parse (command: Command, args: string[]): { values: Values, positionals: string[] } {
  try {
    const parsed = parseArgs({ args, options: { ...COMMANDS[command], help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
    return { values: parsed.values as Values, positionals: parsed.positionals }
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

const str = (values: Values, name: string): string | undefined => typeof values[name] === 'string' ? values[name] : undefined

async function openTarget (values: Values, ctx: CliContext, options: OpenOptions = {}): Promise<Transport> {
  const server = str(values, 'server')
  const dataDir = str(values, 'data-dir')
  if ((server === undefined) === (dataDir === undefined)) throw new UsageError('give one of --server <url> or --data-dir <dir>')
  if (server !== undefined) {
    if (!/^https?:\/\//.test(server)) throw new UsageError(`--server must be an http(s) URL, got '${server}'`)
    return httpTransport(server, str(values, 'key'))
  }
  const store = str(values, 'store') ?? ctx.defaultStore
  if (!(STORE_KINDS as readonly string[]).includes(store)) throw new UsageError(`--store must be ${STORE_KINDS.join(', ')}, got '${store}'`)
  return await ctx.openDataDir(path.resolve(dataDir ?? ''), store as StoreKind, options)
}

const list = (value: string | undefined): string[] | undefined => value?.split(',').map(s => s.trim()).filter(s => s !== '')

async function runExport (values: Values, ctx: CliContext): Promise<number> {
  const out = str(values, 'out')
  if (out === undefined) throw new UsageError('--out <dir> is required')
  const status = str(values, 'status') ?? 'all'
  if (status !== 'all' && status !== 'published') throw new UsageError(`--status must be all or published, got '${status}'`)
  const locales = str(values, 'locales') ?? 'all'
  const transport = await openTarget(values, ctx)
  try {
    const manifest = await exportAll(new Api(transport), {
      out: path.resolve(out),
      status,
      environment: str(values, 'environment'),
      locales: locales === 'all' ? 'all' : list(locales) ?? [],
      collections: list(str(values, 'collections')),
      assets: values.assets === true,
      version: ctx.version
    }, new Progress(ctx.stderr))
    const entries = Object.values(manifest.counts).flatMap(c => Object.values(c)).reduce((a, b) => a + b, 0)
    ctx.stdout.write(`exported ${entries} entries of ${manifest.collections.length} collections, ${manifest.schemas.length} schemas${manifest.assets === null ? '' : `, ${manifest.assets} assets`} to ${out}\n`)
    return 0
  } finally {
    await transport.close()
  }
}

/** `--data-dir`: the export's schemas the types directory lacks are written there before the app opens it. */
async function writeMissingSchemaFiles (exportDir: string, typesDir: string, dryRun: boolean, report: ImportReport): Promise<void> {
  for (const [name, schema] of await exportedSchemas(exportDir)) {
    if (existsSync(path.join(typesDir, `${name}.json`)) || existsSync(path.join(typesDir, `${name}.json5`))) continue
    if (!dryRun) await writeFileAtomic(path.join(typesDir, `${name}.json`), `${JSON.stringify(schema, null, 2)}\n`)
    report.schemas.push(name)
  }
}

async function runImport (values: Values, positionals: string[], ctx: CliContext, env: Record<string, string | undefined>): Promise<number> {
  const dir = positionals[0]
  if (dir === undefined || positionals.length > 1) throw new UsageError('give one export directory: lectern import <dir>')
  if (!existsSync(path.join(dir, 'manifest.json'))) throw new UsageError(`${dir} is not an export (no manifest.json)`)
  const dryRun = values['dry-run'] === true
  const report: ImportReport = { created: 0, updated: 0, unchanged: 0, schemas: [], problems: [] }
  const dataDir = str(values, 'data-dir')
  const options: OpenOptions = {}
  if (dataDir !== undefined && str(values, 'server') === undefined) {
    const typesDir = path.resolve(env.CMS_TYPES_DIR ?? path.join(dataDir, 'types'))
    options.writeSchemas = async () => {
      if (!dryRun) await mkdir(typesDir, { recursive: true })
      await writeMissingSchemaFiles(dir, typesDir, dryRun, report)
      return !dryRun && report.schemas.length > 0
    }
  }
  const transport = await openTarget(values, ctx, options)
  try {
    const api = new Api(transport)
    if (str(values, 'server') !== undefined) await importSchemasOverApi(api, await exportedSchemas(dir), dryRun, report)
    await importEntries(api, dir, dryRun, report, new Progress(ctx.stderr))
  } finally {
    await transport.close()
  }
  for (const problem of report.problems) ctx.stderr.write(`refused: ${problem}\n`)
  ctx.stdout.write(`${dryRun ? 'would write' : 'imported'}: ${report.created} created, ${report.updated} updated, ${report.unchanged} unchanged, ` +
    `${report.schemas.length} schemas${report.schemas.length > 0 ? ` (${report.schemas.join(', ')})` : ''}, ${report.problems.length} refused\n`)
  return report.problems.length > 0 ? 1 : 0
}

async function runTypes (values: Values, ctx: CliContext, env: Record<string, string | undefined>): Promise<number> {
  const dataDir = str(values, 'data-dir')
  const typesDir = path.resolve(str(values, 'types-dir') ?? (dataDir !== undefined ? path.join(dataDir, 'types') : env.CMS_TYPES_DIR ?? path.join('data', 'types')))
  if (!existsSync(typesDir)) throw new UsageError(`no types directory at ${typesDir}`)
  const out = str(values, 'out')
  if (values.check === true && out === undefined) throw new UsageError('--check needs --out <file>')
  const source = await typesFor(typesDir, message => { ctx.stderr.write(`warning: ${message}\n`) })
  if (out === undefined) {
    ctx.stdout.write(source)
    return 0
  }
  if (values.check === true) {
    const current = existsSync(out) ? await readFile(out, 'utf8') : null
    if (current === source) return 0
    ctx.stderr.write(`${out} is ${current === null ? 'missing' : 'out of date'}: run lectern types --out ${out}\n`)
    return 1
  }
  await writeFile(out, source)
  return 0
}

async function runValidate (values: Values, ctx: CliContext): Promise<number> {
  const transport = await openTarget(values, ctx)
  let problems: string[]
  try {
    problems = await validateAll(new Api(transport), new Progress(ctx.stderr), str(values, 'environment'))
  } finally {
    await transport.close()
  }
  for (const problem of problems) ctx.stdout.write(`${problem}\n`)
  ctx.stdout.write(problems.length === 0 ? 'every entry is valid\n' : `${problems.length} problem(s)\n`)
  return problems.length === 0 ? 0 : 1
}

/** Runs `lectern <argv>`; resolves to the exit code. */
export async function main (argv: string[], ctx: CliContext, env: Record<string, string | undefined> = {}): Promise<number> {
  const [name, ...args] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(`${HELP.main}\n`)
    return name === undefined ? 2 : 0
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    ctx.stderr.write(`lectern: unknown command '${name}'\n\n${HELP.main}\n`)
    return 2
  }
  const command = name as Command
  try {
    const { values, positionals } = parse(command, args)
    if (values.help === true) {
      ctx.stdout.write(`${HELP[command]}\n`)
      return 0
    }
    if (command !== 'import' && positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0] ?? ''}'`)
    switch (command) {
      case 'export': return await runExport(values, ctx)
      case 'import': return await runImport(values, positionals, ctx, env)
      case 'types': return await runTypes(values, ctx, env)
      case 'validate': return await runValidate(values, ctx)
    }
  } catch (err) {
    if (err instanceof UsageError) {
      ctx.stderr.write(`lectern ${command}: ${err.message}\n\n${HELP[command]}\n`)
      return 2
    }
    ctx.stderr.write(`lectern ${command}: ${(err as Error).message}\n`)
    return 1
  }
}
