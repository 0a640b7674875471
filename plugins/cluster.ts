// The cluster bus (lib/cluster/bus.ts, contract §12): with CMS_STORE=postgres, announcements
// between every server process sharing the database (LISTEN/NOTIFY on the schema's channel, one
// listening connection besides CMS_DATABASE_POOL's); a LocalBus for the stores of one process.
// Started before the store, which announces its writes on it from inside their transactions.
import fp from 'fastify-plugin'
import { LocalBus, type ClusterBus } from '../lib/cluster/bus.js'
import { PostgresBus } from '../lib/cluster/postgres-bus.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Announcements to and from the other processes sharing the database. */
    cluster: ClusterBus
  }
}

/** How long connecting to the database may take at start. */
const CONNECT_TIMEOUT_MS = 5000

export default fp(async (fastify) => {
  const { config } = fastify
  if (config.store !== 'postgres' || config.databaseUrl === null) {
    fastify.decorate('cluster', new LocalBus())
    return
  }
  const bus = new PostgresBus({
    connection: { connectionString: config.databaseUrl, application_name: 'lectern (listening)', connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
    log: fastify.log.child({ component: 'cluster' })
  })
  await bus.start()
  fastify.decorate('cluster', bus)
  fastify.addHook('onClose', async () => { await bus.close() })
}, { name: 'cluster', dependencies: ['config'], fastify: '5.x' })
