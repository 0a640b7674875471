import fp from 'fastify-plugin'
import { resolveScope } from '../lib/scope.js'
import type { Scope } from '../types/scope.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The effective scope for `_locale` / `_environment` query values (missing or unknown → the first). */
    scopeOf: (query: { _locale?: unknown, _environment?: unknown }) => Scope
  }
}

export default fp(async (fastify) => {
  const { locales, environments } = fastify.config
  fastify.decorate('scopeOf', (query: { _locale?: unknown, _environment?: unknown }) =>
    resolveScope(locales, environments, query._locale, query._environment))
}, { name: 'locales', dependencies: ['config'], fastify: '5.x' })
