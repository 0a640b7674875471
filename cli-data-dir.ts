// `--data-dir` of the `lectern` command: the app built in this process on a data directory, spoken
// to through inject, so that every command follows the API's rules on every store.
import Fastify from 'fastify'
import app from './app.js'
import { loadConfig } from './lib/config.js'
import { createLogger, serverOptions } from './lib/server-options.js'
import type { Transport } from './lib/cli/api.js'

export async function openDataDir (dataDir: string, store: 'sqlite' | 'file'): Promise<Transport> {
  // Keys, webhooks and seeding off: the data dir's owner runs the command.
  const config = loadConfig({ CMS_DATA_DIR: dataDir, CMS_STORE: store, CMS_SEED: 'false', CMS_LOG_LEVEL: 'error' })
  const fastify = Fastify({ ...serverOptions(config), loggerInstance: createLogger(config) })
  await fastify.register(app, { config })
  await fastify.ready()
  return {
    async request (method, url, json) {
      const res = await fastify.inject({ method: method as 'GET', url, ...(json === undefined ? {} : { payload: json as object }) })
      return { status: res.statusCode, body: res.rawPayload }
    },
    async close () { await fastify.close() }
  }
}
