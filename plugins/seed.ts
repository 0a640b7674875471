// First start only (the data plugin copied the example schemas): the sample entries of
// examples/content go into the store for the default locale and environment. The store decides
// the first start, not the data dir: with PostgreSQL a replica on a new data dir (or types dir)
// joins a database that may hold content already, and a store ever written to is never seeded
// again. Two replicas starting together on an empty one both insert: each slug is created once
// (the other's create conflicts and is skipped, lib/schema/seed.ts).
import fp from 'fastify-plugin'
import { examplesDir, readSampleEntries } from '../lib/schema/examples.js'
import { insertSamples } from '../lib/schema/seed.js'
import { resolveScope } from '../lib/scope.js'

export default fp(async (fastify) => {
  if (!fastify.dataSeeded) return
  if (await fastify.store.changes.latestSeq() > 0 || await fastify.store.changes.horizon() > 0) {
    fastify.log.info('first start on this data dir, but the store already holds content: no sample entries inserted')
    return
  }
  const { locales, environments } = fastify.config
  await insertSamples({
    samples: await readSampleEntries(examplesDir()),
    schemas: fastify.schemas,
    store: fastify.store,
    // The default scope: the first locale (or none) and the first environment (or 'default').
    scope: resolveScope(locales, environments, undefined, undefined),
    log: fastify.log,
    keepVersions: fastify.config.revisions
  })
}, { name: 'seed', dependencies: ['config', 'data', 'schemas', 'store'], fastify: '5.x' })
