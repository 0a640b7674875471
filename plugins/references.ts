// References (interface.md "References", "Reverse-reference index"; contract §4 `_resolve`):
// the reference service the content pipeline calls (reference check, relative asset URLs, the
// index, `_resolve`; plugins/content.ts hands it in), and the reverse-reference index kept in
// `<dataDir>/references.json`.
//
// The saved index is used at start only when the last run closed cleanly and the reference
// fields are the ones it was built for (lib/references/index-file.ts); otherwise it is rebuilt
// from the stored entries, and that is logged. With environments configured there is no index
// (the referrers endpoint answers an empty list), so nothing is kept or saved. With PostgreSQL no
// file is kept either: replicas may share a data dir, and each would overwrite the others' file;
// each builds the index from the database at start, and other replicas' writes keep it current
// through plugins/remote-changes.ts.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { TextBudget } from '../lib/content/json-memo.js'
import { IndexFile } from '../lib/references/index-file.js'
import { ReferenceService } from '../lib/references/service.js'
import { DEFAULT_ENVIRONMENT } from '../types/scope.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Reference checks, `_resolve`, asset URL rewriting and the reverse-reference index. */
    references: ReferenceService
  }
}

export default fp(async (fastify) => {
  const { config } = fastify
  const log = fastify.log.child({ component: 'references' })
  const service = new ReferenceService({
    registry: fastify.schemas,
    store: fastify.store,
    publicUrl: config.publicUrl,
    environments: config.environments,
    defaultEnvironment: DEFAULT_ENVIRONMENT,
    // Every kept text's budget (CMS_TEXT_CACHE_BYTES): the content plugin hands the same one to its renderer.
    texts: new TextBudget(config.textCacheBytes)
  })
  fastify.decorate('references', service)

  const file = new IndexFile({
    dir: config.dataDir,
    onError: err => { log.error({ err }, 'could not save the reference index; the next change or the close tries again') }
  })
  if (!service.indexEnabled || fastify.store.kind === 'postgres') {
    // Writes made now are not indexed: a file from a run without environments would be stale
    // if they were turned off again, so it goes (that start rebuilds the index).
    if (await file.discard()) log.info('reference index file removed: the index is not kept while environments are configured or with postgres')
    if (service.indexEnabled) await useBuiltIndex(fastify, service, log)
    return
  }
  const signature = service.signature()
  const content = await fastify.store.contentFingerprint()
  const loaded = await file.load(signature, content)
  let index
  if (loaded.status === 'loaded') {
    index = loaded.index
    log.debug({ referrers: index.size }, 'reference index loaded')
  } else {
    const started = performance.now()
    index = await service.buildIndex()
    const reason = {
      missing: 'its file is missing',
      unclean: 'the last run did not close cleanly',
      outdated: 'the reference fields changed',
      stale: 'the stored entries changed while the server was stopped',
      unreadable: 'its file could not be read'
    }[loaded.status]
    log.info({ referrers: index.size, ms: Math.round(performance.now() - started) }, `reference index rebuilt from the stored entries: ${reason}`)
    if (loaded.status === 'unreadable') log.warn({ err: loaded.error }, 'the reference index file was unreadable')
  }
  service.useIndex(index, () => { file.changed() })
  await file.open(index, signature, loaded.status !== 'loaded', content)

  const unsubscribe = fastify.events.on(async event => {
    if (!event.event.startsWith('schema.')) return
    await service.schemasChanged()
    file.setSignature(service.signature())
  })

  fastify.addHook('onClose', async () => {
    unsubscribe()
    // A rebuild after a schema change finishes before the final save.
    await fastify.events.settled()
    // The content as the final save leaves it matched (the store closes after this plugin).
    file.setContent(await fastify.store.contentFingerprint().catch((err: unknown) => {
      log.warn({ err }, 'could not fingerprint the stored entries; the next start rebuilds the reference index')
      return null
    }))
    await file.close()
  })
}, { name: 'references', dependencies: ['config', 'data', 'events', 'schemas', 'store'], fastify: '5.x' })

/** The index built from the stored entries, kept in memory only (PostgreSQL), following schema changes. */
async function useBuiltIndex (fastify: FastifyInstance, service: ReferenceService, log: FastifyBaseLogger): Promise<void> {
  const started = performance.now()
  const index = await service.buildIndex()
  service.useIndex(index, () => {})
  log.info({ referrers: index.size, ms: Math.round(performance.now() - started) }, 'reference index built from the stored entries')
  const unsubscribe = fastify.events.on(async event => {
    if (event.event.startsWith('schema.')) await service.schemasChanged()
  })
  fastify.addHook('onClose', async () => {
    unsubscribe()
    await fastify.events.settled()
  })
}
