// The schema registry (interface.md "Schema definition", contract §5) over the types directory.
// With PostgreSQL, every process sharing the database shares the types directory too (contract
// §12): schema writes then take an advisory lock (lib/cluster/write-lock.ts), so two replicas'
// writes never interleave and each decides against what the other wrote.
import fp from 'fastify-plugin'
import { AdvisoryLock } from '../lib/cluster/write-lock.js'
import { SchemaFileRegistry } from '../lib/schema/registry.js'
import { PostgresStore } from '../lib/store/postgres.js'
import type { SchemaRegistry } from '../types/schema.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Every schema and the compiled model of each content collection; performs schema writes. */
    schemas: SchemaRegistry
  }
}

export default fp(async (fastify) => {
  const { store } = fastify
  const lock = store instanceof PostgresStore ? new AdvisoryLock(store, 'schemas') : undefined
  const registry = new SchemaFileRegistry({ typesDir: fastify.config.typesDir, log: fastify.log, ...(lock === undefined ? {} : { lock }) })
  await registry.load()
  fastify.decorate('schemas', registry)
  // A schema write in flight finishes before the process exits.
  fastify.addHook('onClose', async () => { await registry.idle() })
}, { name: 'schemas', dependencies: ['config', 'data', 'events', 'store'], fastify: '5.x' })
