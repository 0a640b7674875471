// Other processes' writes (contract §12, several replicas on one database), heard on the cluster
// bus (plugins/cluster.ts) and acted on here:
// - content (announced by the store from inside each write's transaction; lib/content/remote.ts):
//   the store's bucket, the response cache and the reverse-reference index follow; after a lost
//   listening connection, every cached answer goes and the change log says what was missed;
// - schemas (announced here after each schema write of this process; the types directory is
//   shared): the registry reads it again, cached answers go and the reference plans follow;
// - assets (announced here after each upload and delete of this process; files and records are
//   shared): where the file was found and the asset's transform variants are forgotten
//   (lib/assets/remote.ts); after a lost listening connection, every remembered location goes.
// Stores of one process have nobody else writing: nothing to do.
import fp from 'fastify-plugin'
import { RemoteAssets } from '../lib/assets/remote.js'
import { ASSET_TOPIC, CONTENT_TOPIC, SCHEMA_TOPIC, type BusMessage } from '../lib/cluster/bus.js'
import { RemoteChanges } from '../lib/content/remote.js'
import { DEFAULT_ENVIRONMENT, type Scope } from '../types/scope.js'

export default fp(async (fastify) => {
  const { config, cluster, store } = fastify
  if (config.store !== 'postgres') return
  const environments = config.environments.length > 0 ? config.environments : [DEFAULT_ENVIRONMENT]
  const locales = config.locales.length > 0 ? config.locales : [null]
  const scopes: Scope[] = environments.flatMap(environment => locales.map(locale => ({ environment, locale })))
  const remote = new RemoteChanges({
    store,
    registry: fastify.schemas,
    cache: fastify.responseCache,
    references: fastify.references,
    scopes,
    log: fastify.log.child({ component: 'remote-changes' })
  }, await store.changes.latestSeq())
  const log = fastify.log.child({ component: 'remote-changes' })
  // Schemas read again one reload after the other; a reload asked for during one runs once more after it.
  let schemas: Promise<void> = Promise.resolve()
  const reloadSchemas = (): void => {
    schemas = schemas.then(async () => {
      await fastify.schemas.reload()
      fastify.responseCache.clear()
      await fastify.references.schemasChanged()
    }).catch((err: unknown) => { log.warn({ err }, 'reading the schemas another process wrote failed') })
  }
  const assets = new RemoteAssets({ library: fastify.assets, transforms: fastify.transforms, log })
  const unsubscribe = cluster.subscribe((message: BusMessage) => {
    if (message.topic === CONTENT_TOPIC) void remote.changed(message.data)
    else if (message.topic === SCHEMA_TOPIC) reloadSchemas()
    else if (message.topic === ASSET_TOPIC) void assets.changed(message.data)
  })
  // Other processes' writes can no longer be heard of: no cached answer may outlive that by long.
  const unlost = cluster.onLost(() => {
    fastify.responseCache.clear()
    assets.forgetAll()
  })
  const unresync = cluster.onResync(() => {
    void remote.resync()
    reloadSchemas()
    assets.forgetAll()
  })
  const announce = (topic: string, data: Record<string, unknown>): void => {
    cluster.publish(topic, data).catch((err: unknown) => {
      log.warn({ err, topic }, 'could not announce a write to the other processes; they catch up at their next resync')
    })
  }
  const unlisten = fastify.events.on(event => {
    if (event.event.startsWith('schema.')) announce(SCHEMA_TOPIC, { event: event.event })
    else if (event.event === 'asset.created' || event.event === 'asset.deleted') {
      announce(ASSET_TOPIC, { event: event.event, environment: event.environment, path: event.path })
    }
  })
  fastify.addHook('onClose', async () => {
    unsubscribe()
    unresync()
    unlost()
    unlisten()
    await remote.settled()
    await schemas
    await assets.settled()
  })
}, { name: 'remote-changes', dependencies: ['config', 'cluster', 'events', 'store', 'schemas', 'cache', 'references', 'assets', 'transforms'], fastify: '5.x' })
