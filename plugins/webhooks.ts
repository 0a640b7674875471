import path from 'node:path'
import fp from 'fastify-plugin'
import type { Config } from '../lib/config.js'
import { PostgresStore } from '../lib/store/postgres.js'
import { PostgresOutbox } from '../lib/webhooks/postgres-outbox.js'
import { WebhookService } from '../lib/webhooks/service.js'
import { DEFAULT_ENVIRONMENT, type Scope } from '../types/scope.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Webhook delivery (contract §6): the outbox, the background worker and the delivery history. */
    webhooks: WebhookService
  }
}

/**
 * The outbox lives beside the content: in the data dir (SQLite and file stores), or in the
 * database with PostgreSQL, where replicas share it and each delivery is claimed by one of them.
 */
export const OUTBOX_FILE = 'outbox.db'

// Every event on the bus becomes one delivery per configured URL, written to the outbox inside
// the listener: routes emit before they reply, and the reply waits until the record is durable
// (SQLite's is at once; PostgreSQL's is awaited in onSend), so an acknowledged change is never
// lost. Delivery itself runs in the background, after the reply, and never affects it.
export default fp(async (fastify) => {
  const { config, store } = fastify
  const shared = config.webhooks.length > 0 && store instanceof PostgresStore ? await PostgresOutbox.open(store) : undefined
  const service = new WebhookService({
    urls: config.webhooks,
    secret: config.webhookSecret,
    backoffMs: config.webhookBackoffMs,
    outboxFile: path.join(config.dataDir, OUTBOX_FILE),
    ...(shared === undefined ? {} : { outbox: shared }),
    logger: fastify.log.child({ component: 'webhooks' })
  })
  fastify.decorate('webhooks', service)

  if (service.enabled) {
    const off = fastify.events.on(async event => { await service.record(event) })
    // A failed record is the bus's to report; the reply still goes (its change is stored, and the
    // next start replays it).
    fastify.addHook('onSend', async (_request, _reply, payload) => {
      if (service.recordingCount > 0) await service.recorded()
      return payload
    })
    // Delivery starts once the app is ready; pending deliveries from a previous run resume, and
    // changes a crash left stored but unannounced are announced first (lib/webhooks/replay.ts).
    fastify.addHook('onReady', async () => {
      await service.catchUp({ log: fastify.store.changes, scopes: servedScopes(config), entry: async (scope, collection, slug) => await fastify.store.get(scope, collection, slug) })
      await service.start()
    })
    fastify.addHook('onClose', async () => {
      off()
      await service.close()
    })
  }
}, { name: 'webhooks', dependencies: ['config', 'data', 'events', 'store'], fastify: '5.x' })

/** Every (environment, locale) the settings serve. */
function servedScopes (config: Config): Scope[] {
  const environments = config.environments.length === 0 ? [DEFAULT_ENVIRONMENT] : config.environments
  const locales = config.locales.length === 0 ? [null] : config.locales
  return environments.flatMap(environment => locales.map(locale => ({ environment, locale })))
}
