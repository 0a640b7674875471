// Builds the app on its own temporary data dir, the way server.ts does, minus listening.
// Tap runs test files in parallel processes, so nothing here is shared between tests.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { Ajv, type AnySchema } from 'ajv'
import addFormats from 'ajv-formats'
import type { Test } from 'tap'
import app, { serverOptions } from '../app.js'
import { loadConfig, type Config } from '../lib/config.js'
import { ErrorReply } from '../types/errors.js'

// Autoload must load the .ts sources under tap's TypeScript loader.
process.env.FASTIFY_AUTOLOAD_TYPESCRIPT = '1'

export type Env = Record<string, string>
export const STORES = ['sqlite', 'file'] as const
export type StoreName = (typeof STORES)[number]

export const ADMIN_KEY = 'admin-key-0123456789abcdef'
export const EDITOR_KEY = 'editor-key-0123456789abcdef'
export const VIEWER_KEY = 'viewer-key-0123456789abcdef'
/** Settings that turn API keys on with one key of each role. */
export const KEYS_ENV: Env = { CMS_API_KEYS: `${ADMIN_KEY}:admin,${EDITOR_KEY}:editor,${VIEWER_KEY}:viewer` }

/** A fresh temporary directory, removed when the test ends. */
export function tempDir (t: Test, prefix = 'lectern-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

export function testConfig (dataDir: string, env: Env = {}): Config {
  return loadConfig({ CMS_SEED: 'false', CMS_LOG_LEVEL: 'silent', CMS_DATA_DIR: dataDir, ...env })
}

export interface BuildOptions {
  /** Reuse a data dir (to test a restart); a fresh temp dir otherwise. */
  dataDir?: string
  /** Do not close the app at teardown (the test closes it itself). */
  keepOpen?: boolean
}

/** Builds and readies the app on a temp data dir; closes it when the test ends. */
export async function build (t: Test, env: Env = {}, options: BuildOptions = {}): Promise<FastifyInstance> {
  const dataDir = options.dataDir ?? path.join(tempDir(t), 'data')
  const config = testConfig(dataDir, env)
  // A loaded CI box (tap runs files in parallel) can take longer than the 10 s default to load plugins.
  const fastify = Fastify({ ...serverOptions(config), pluginTimeout: 60_000 })
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
