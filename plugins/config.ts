import fp from 'fastify-plugin'
import type { Config } from '../lib/config.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The validated settings (contract §1), parsed once by server.ts or the test helper. */
    config: Config
  }
}

export interface ConfigPluginOptions {
  config: Config
}

export default fp<ConfigPluginOptions>(async (fastify, opts) => {
  if (opts.config === undefined) throw new Error('the config plugin needs the parsed settings as options.config')
  fastify.decorate('config', opts.config)
}, { name: 'config', fastify: '5.x' })
