// The data directory (contract §1): created on start with its types/ and assets/ folders and
// locked for this process until close (lib/data-lock.ts), except with PostgreSQL, where several
// processes share the database and may share a data dir too (contract §12). On the first start
// the example schemas are copied in unless CMS_SEED=false; the seed plugin then adds the sample
// entries if the store holds nothing yet (plugins/seed.ts).
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import fp from 'fastify-plugin'
import { lockDataDir } from '../lib/data-lock.js'
import { copyExampleTypes, examplesDir } from '../lib/schema/examples.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** True when this start was the first one and seeded the examples. */
    dataSeeded: boolean
  }
}

export default fp(async (fastify) => {
  const { dataDir, typesDir, assetsDir, seed, store } = fastify.config
  await mkdir(dataDir, { recursive: true })
  if (store !== 'postgres') {
    // Before anything is read or written: a second process on this directory stops here.
    const lock = lockDataDir(dataDir)
    // Registered first, so it runs after every other plugin's onClose (they run in reverse).
    fastify.addHook('onClose', async () => { lock.release() })
  }

  // "First start" is judged by the types directory, which only this plugin creates. With the
  // default layout a new data dir has no types/ yet, so the two coincide; a CMS_TYPES_DIR that
  // already exists is the operator's own and is never seeded.
  const firstStart = !existsSync(typesDir)
  for (const dir of [typesDir, assetsDir]) await mkdir(dir, { recursive: true })

  let seeded = false
  if (firstStart && seed) {
    const copied = await copyExampleTypes(examplesDir(), typesDir)
    fastify.log.info({ schemas: copied }, 'first start: example schemas copied into the types directory (CMS_SEED=false skips this)')
    seeded = true
  }
  fastify.decorate('dataSeeded', seeded)
}, { name: 'data', dependencies: ['config'], fastify: '5.x' })
