// The schema registry (interface.md "Schema definition", contract §5) over the types directory.
import fp from 'fastify-plugin'
import { SchemaFileRegistry } from '../lib/schema/registry.js'
import type { SchemaRegistry } from '../types/schema.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Every schema and the compiled model of each content collection; performs schema writes. */
    schemas: SchemaRegistry
  }
}

export default fp(async (fastify) => {
  const registry = new SchemaFileRegistry({ typesDir: fastify.config.typesDir, log: fastify.log })
  await registry.load()
  fastify.decorate('schemas', registry)
  // A schema write in flight finishes before the process exits.
  fastify.addHook('onClose', async () => { await registry.idle() })
}, { name: 'schemas', dependencies: ['config', 'data', 'events'], fastify: '5.x' })
