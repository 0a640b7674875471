// `--data-dir` of the `lectern` command: the app built in this process on a data directory, spoken
// to through inject, so that every command follows the API's rules on every store.
import Fastify from 'fastify'
import app from './app.js'
import { SCHEMA_TOPIC } from './lib/cluster/bus.js'
import { AdvisoryLock } from './lib/cluster/write-lock.js'
import { loadConfig, type Config, type StoreKind } from './lib/config.js'
import { PostgresStore } from './lib/store/postgres.js'
import { createLogger, serverOptions } from './lib/server-options.js'
import type { Transport } from './lib/cli/api.js'
import type { OpenOptions } from './lib/cli/main.js'

/** The settings of the server a data directory belongs to that shape what the API answers. */
export const DATA_DIR_SETTINGS = ['CMS_LOCALES', 'CMS_ENVIRONMENTS', 'CMS_TYPES_DIR', 'CMS_ASSETS_DIR', 'CMS_PUBLIC_URL'] as const
/** With CMS_STORE=postgres, where the data is (contract §12). */
export const DATABASE_SETTINGS = ['CMS_DATABASE_URL', 'CMS_DATABASE_POOL'] as const

/**
 * The app on a data directory. With postgres it is one more process on the database, beside any
 * running replicas: its writes are announced to them as theirs are, and the schema files
 * `writeSchemas` writes into the shared types directory first are written under the replicas'
 * schema write lock and announced once the app is up.
 */
export async function openDataDir (dataDir: string, store: StoreKind, env: Record<string, string | undefined> = {}, options: OpenOptions = {}): Promise<Transport> {
  const names = store === 'postgres' ? [...DATA_DIR_SETTINGS, ...DATABASE_SETTINGS] : DATA_DIR_SETTINGS
  const settings = Object.fromEntries(names.flatMap(name => env[name] === undefined ? [] : [[name, env[name]]]))
  // Keys, webhooks and seeding off: the data dir's owner runs the command. Nothing kept for a
  // second request (no response cache, so no kept sync answers; no kept entry texts; no pooled
  // bodies; no parsed entries in SQLite's caches): a command reads each answer once. An export of
  // 100,000 entries peaked at 405 MB with sync answers and texts kept, 276-302 MB without, and
  // 171-182 MB with the entry caches off too: a cached entry lives long enough to reach V8's old
  // generation, which is collected only as the heap grows (bench export row).
  const config = loadConfig({
    ...settings,
    CMS_DATA_DIR: dataDir,
    CMS_STORE: store,
    CMS_SEED: 'false',
    CMS_LOG_LEVEL: 'error',
    CMS_CACHE_MAX_BYTES: '0',
    CMS_TEXT_CACHE_BYTES: '0',
    CMS_BODY_POOL_BYTES: '0',
    CMS_ENTRY_CACHE_BYTES: '0'
  })
  const schemasWritten = options.writeSchemas === undefined ? false : await underSchemaLock(config, options.writeSchemas)
  const fastify = Fastify({ ...serverOptions(config), loggerInstance: createLogger(config) })
  await fastify.register(app, { config })
  await fastify.ready()
  if (schemasWritten) await fastify.cluster.publish(SCHEMA_TOPIC, { event: 'schema.created' })
  return {
    async request (method, url, json) {
      // As a stream: light-my-request otherwise also decodes every body into a string, unused here.
      const res = await fastify.inject({ method: method as 'GET', url, payloadAsStream: true, ...(json === undefined ? {} : { payload: json as object }) })
      const chunks: Buffer[] = []
      for await (const chunk of res.stream()) chunks.push(chunk as Buffer)
      // Each request ends on a new turn of the event loop: a command that only awaits injected
      // requests never lets the microtask queue drain, and until it does V8 keeps what the
      // requests dropped alive (an export of 100,000 entries grew past 500 MB without this).
      await new Promise(resolve => setImmediate(resolve))
      return { status: res.statusCode, body: chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks) }
    },
    async close () { await fastify.close() }
  }
}

/** `task` holding the schema write lock of the processes sharing the database (postgres), else at once. */
async function underSchemaLock<T> (config: Config, task: () => Promise<T>): Promise<T> {
  if (config.databaseUrl === null) return await task()
  // A store of its own, for the lock only: the app is not up yet, and reads the files once they are written.
  const store = new PostgresStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, databasePool: 1 })
  await store.open()
  try {
    return await new AdvisoryLock(store, 'schemas').run(task)
  } finally {
    await store.close()
  }
}
