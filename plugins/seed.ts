// First start only (the data plugin copied the example schemas): the sample entries of
// examples/content go into the store for the default locale and environment.
import fp from 'fastify-plugin'
import { examplesDir, readSampleEntries } from '../lib/schema/examples.js'
import { insertSamples } from '../lib/schema/seed.js'
import { resolveScope } from '../lib/scope.js'

export default fp(async (fastify) => {
  if (!fastify.dataSeeded) return
  const { locales, environments } = fastify.config
  await insertSamples({
    samples: await readSampleEntries(examplesDir()),
    schemas: fastify.schemas,
    store: fastify.store,
    // The default scope: the first locale (or none) and the first environment (or 'default').
    scope: resolveScope(locales, environments, undefined, undefined),
    log: fastify.log
  })
}, { name: 'seed', dependencies: ['config', 'data', 'schemas', 'store'], fastify: '5.x' })
