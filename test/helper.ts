// Builds the app on its own temporary data dir, the way server.ts does, minus listening.
// Tap runs test files in parallel processes, so nothing here is shared between tests.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import type { ServerOptions as HttpServerOptions } from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { Ajv, type AnySchema } from 'ajv'
import addFormats from 'ajv-formats'
import type { Test } from 'tap'
import { TS_CHILD_ARGS, TS_CHILD_ENV } from './fixtures/processes.js'
import app from '../app.js'
import { loadConfig, type Config } from '../lib/config.js'
import { createLogger, serverOptions } from '../lib/server-options.js'
import { ErrorReply } from '../types/errors.js'

// Autoload must load the .ts sources under tap's TypeScript loader.
process.env.FASTIFY_AUTOLOAD_TYPESCRIPT = '1'

export type Env = Record<string, string>
export const ALL_STORES = ['sqlite', 'file', 'postgres'] as const
export type StoreName = (typeof ALL_STORES)[number]
/** The stores the tests run on while LECTERN_TEST_STORES is unset. */
export const DEFAULT_TEST_STORES = 'sqlite,file,postgres'

/** LECTERN_TEST_STORES: a comma list of store names (an unknown one is an error, not a silent skip). */
export function testStores (value: string | undefined): readonly StoreName[] {
  const names = (value === undefined || value.trim() === '' ? DEFAULT_TEST_STORES : value).split(',').map(s => s.trim()).filter(s => s !== '')
  for (const name of names) {
    if (!(ALL_STORES as readonly string[]).includes(name)) throw new Error(`LECTERN_TEST_STORES: unknown store '${name}' (expected ${ALL_STORES.join(', ')})`)
  }
  return [...new Set(names)] as StoreName[]
}

/** The stores every API test runs on (eachStore and the tests that loop over them). */
export const STORES = testStores(process.env.LECTERN_TEST_STORES)

/**
 * The database a `store` on `dataDir` uses: with postgres, the schema of that data dir on the
 * suite's server (test/fixtures/postgres.ts), so two apps on one data dir share their data as
 * replicas do; undefined for the stores that keep their data in the data dir. A test file that
 * never asks for postgres never loads the driver.
 */
export async function databaseUrlFor (t: Test, store: StoreName, dataDir: string): Promise<string | undefined> {
  if (store !== 'postgres') return undefined
  const { postgresUrl } = await import('./fixtures/postgres.js')
  return await postgresUrl(t, path.resolve(dataDir))
}

/** CMS_STORE for `store`, and CMS_DATABASE_URL with postgres (databaseUrlFor). */
export async function storeEnv (t: Test, store: StoreName, dataDir: string): Promise<Env> {
  const url = await databaseUrlFor(t, store, dataDir)
  return url === undefined ? { CMS_STORE: store } : { CMS_STORE: store, CMS_DATABASE_URL: url }
}

export const ADMIN_KEY = 'admin-key-0123456789abcdef'
export const EDITOR_KEY = 'editor-key-0123456789abcdef'
export const VIEWER_KEY = 'viewer-key-0123456789abcdef'
/** Settings that turn API keys on with one key of each role. */
export const KEYS_ENV: Env = { CMS_API_KEYS: `${ADMIN_KEY}:admin,${EDITOR_KEY}:editor,${VIEWER_KEY}:viewer` }

/** A fresh temporary directory, removed when the test ends. */
export function tempDir (t: Test, prefix = 'lectern-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix))
  // Retries: on a busy machine a closing file handle or folder listing can make one pass fail
  // (ENOTEMPTY, EBUSY), and a teardown that throws fails the test and skips the teardowns after it.
  t.teardown(() => { rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }) })
  return dir
}

/** The repository root. */
export const ROOT = path.resolve(import.meta.dirname, '..')

export { TS_CHILD_ARGS, TS_CHILD_ENV } from './fixtures/processes.js'

/** A source file's URL, for `import()` in a child's script: `sourceUrl('lib', 'data-lock.ts')`. */
export function sourceUrl (...segments: string[]): string {
  return pathToFileURL(path.join(ROOT, ...segments)).href
}

/**
 * Runs `script` as an ES module in a child Node process with `flags` (and the TypeScript loader),
 * and returns its stdout. Stdout goes to a file, not a pipe, so text V8 writes to it directly
 * (%DebugPrint) is all there; a non-zero exit throws with the child's stderr.
 */
export async function evalModule (t: Test, script: string, flags: string[] = []): Promise<string> {
  const outFile = path.join(tempDir(t), 'stdout.txt')
  const out = openSync(outFile, 'w')
  let stderr = ''
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [...TS_CHILD_ARGS, ...flags, '--input-type=module', '--eval', script],
      { cwd: ROOT, env: TS_CHILD_ENV, stdio: ['ignore', out, 'pipe'] })
    child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
    child.once('error', reject)
    child.once('exit', resolve)
  }).finally(() => { closeSync(out) })
  if (code !== 0) throw new Error(`child exited with ${String(code)}: ${stderr}`)
  return readFileSync(outFile, 'utf8')
}

export interface ServerProcess {
  child: ChildProcessWithoutNullStreams
  /** Everything it wrote so far, stdout and stderr. */
  output: () => string
  /** Its exit code once it has ended (null when a signal ended it). */
  exited: Promise<number | null>
}

/** The real process: server.ts in a child, through the same TypeScript loader tap gave this one, at log level info unless `env` says. */
export function startServer (env: Env): ServerProcess {
  const child = spawn(process.execPath, [...TS_CHILD_ARGS, 'server.ts'], {
    cwd: ROOT,
    env: { ...TS_CHILD_ENV, FASTIFY_AUTOLOAD_TYPESCRIPT: '1', CMS_LOG_LEVEL: 'info', ...env }
  })
  let out = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => { out += d.toString() })
  const exited = new Promise<number | null>(resolve => child.on('exit', code => { resolve(code) }))
  return { child, output: () => out, exited }
}

export { freePort } from './fixtures/processes.js'

/** Polls /health until it answers 200 (true), the process ends or `timeoutMs` passes (false). */
export async function healthy (port: number, exited: Promise<number | null>, timeoutMs = 30_000): Promise<boolean> {
  const state = { exited: false }
  void exited.then(() => { state.exited = true })
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && !state.exited) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`)
      if (res.status === 200) return true
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return false
}

/** Polls /health until it answers 200; fails the test if the process ends or `timeoutMs` passes first. */
export async function waitForHealth (t: Test, port: number, exited: Promise<number | null>, timeoutMs = 30_000): Promise<void> {
  if (!await healthy(port, exited, timeoutMs)) t.fail('server did not become healthy')
}

export function testConfig (dataDir: string, env: Env = {}): Config {
  return loadConfig({ CMS_SEED: 'false', CMS_LOG_LEVEL: 'silent', CMS_DATA_DIR: dataDir, ...env })
}

export interface BuildOptions {
  /** Reuse a data dir (to test a restart); a fresh temp dir otherwise. */
  dataDir?: string
  /** Do not close the app at teardown (the test closes it itself). */
  keepOpen?: boolean
  /** Server options over Lectern's own (lib/server-options.ts): Node's timeouts and HTTP server options. */
  server?: { requestTimeout?: number, http?: HttpServerOptions }
}

/** `env`, with the data dir's database when it asks for postgres without naming one. */
async function withDatabase (t: Test, env: Env, dataDir: string): Promise<Env> {
  if (env.CMS_STORE !== 'postgres' || env.CMS_DATABASE_URL !== undefined) return env
  return { ...env, ...await storeEnv(t, 'postgres', dataDir) }
}

/** Builds and readies the app on a temp data dir; closes it when the test ends. */
export async function build (t: Test, env: Env = {}, options: BuildOptions = {}): Promise<FastifyInstance> {
  const dataDir = options.dataDir ?? path.join(tempDir(t), 'data')
  const config = testConfig(dataDir, await withDatabase(t, env, dataDir))
  // A loaded CI box (tap runs files in parallel) can take longer than the 10 s default to load plugins.
  const logger: FastifyBaseLogger = createLogger(config)
  const fastify = Fastify({ ...serverOptions(config), loggerInstance: logger, pluginTimeout: 60_000, ...options.server })
  await fastify.register(app, { config })
  await fastify.ready()
  if (options.keepOpen !== true) t.teardown(async () => { await fastify.close() })
  return fastify
}

/** Runs `suite` once per storage backend, each as its own subtest with CMS_STORE set. */
export function eachStore (t: Test, suite: (t: Test, store: StoreName, env: Env) => Promise<void>): void {
  for (const store of STORES) {
    void t.test(`store=${store}`, async t => { await suite(t, store, { CMS_STORE: store }) })
  }
}

const ajv = new Ajv({ allErrors: true, strict: false })
addFormats.default(ajv)
ajv.addSchema(ErrorReply)

/** Asserts that a response body conforms to a route's exported TypeBox schema: the contract test. */
export function assertShape (t: Test, schema: AnySchema, body: unknown, what = 'body matches its schema'): void {
  const validate = ajv.compile(schema)
  const ok = validate(body)
  t.ok(ok, what, ok ? {} : { errors: validate.errors, body })
}

/** Asserts the contract's error envelope with the given status and code. */
export function assertError (t: Test, res: LightMyRequestResponse, statusCode: number, code: string): void {
  t.equal(res.statusCode, statusCode, `status ${statusCode}`)
  const body = res.json()
  assertShape(t, ErrorReply, body, 'error body has the contract shape')
  t.equal(body.code, code, `code ${code}`)
  t.equal(body.statusCode, statusCode)
  t.notMatch(res.body, /\bat .+:\d+:\d+|\/tmp\/|node_modules/, 'no stack trace or path in the body')
}

export const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` })
