import fp from 'fastify-plugin'
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import { KeyRing, can, hasRole, type Caller, type Permission } from '../lib/auth.js'
import type { Role } from '../lib/config.js'
import { forbidden, unauthorized } from '../lib/errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** A preHandler that answers 401 (no or unknown key) or 403 (role lacks it) unless the caller has `permission`. */
    requirePermission: (permission: Permission) => preHandlerAsyncHookHandler
    /** A preHandler that answers 401 (no or unknown key) or 403 (another role) unless the caller's role is one of `roles`. */
    requireRole: (...roles: Role[]) => preHandlerAsyncHookHandler
    /** Whether a hook is one of the guards above (the OpenAPI document declares security where one runs). */
    isKeyGuard: (hook: unknown) => boolean
  }
  interface FastifyRequest {
    /** Who is calling, from the Authorization or X-API-Key header (resolved once, on first use). */
    readonly caller: Caller
  }
}

const kCaller = Symbol('caller')

export default fp(async (fastify) => {
  const ring = new KeyRing(fastify.config.apiKeys)
  const guards = new WeakSet<object>()
  const guard = (hook: preHandlerAsyncHookHandler): preHandlerAsyncHookHandler => { guards.add(hook); return hook }
  fastify.decorate('isKeyGuard', (hook: unknown) => typeof hook === 'function' && guards.has(hook))

  // Resolved from the headers on first use and kept: no hook runs on every request.
  fastify.decorateRequest(kCaller, null)
  fastify.decorateRequest('caller', {
    getter (this: FastifyRequest): Caller {
      const kept = this as unknown as { [kCaller]: Caller | null }
      let caller = kept[kCaller]
      if (caller === null) {
        const apiKey = this.headers['x-api-key']
        caller = ring.resolve(this.headers.authorization, Array.isArray(apiKey) ? apiKey[0] : apiKey)
        kept[kCaller] = caller
      }
      return caller
    }
  })

  fastify.decorate('requirePermission', (permission: Permission): preHandlerAsyncHookHandler => {
    return guard(async function checkPermission (request) {
      const caller = request.caller
      if (!caller.authenticated) {
        throw unauthorized(caller.invalidKey ? 'The API key is not valid.' : 'A valid API key is required.')
      }
      if (!can(caller, permission)) throw forbidden(`The '${caller.role ?? 'anonymous'}' role lacks the ${permission} permission.`)
    })
  })

  fastify.decorate('requireRole', (...roles: Role[]): preHandlerAsyncHookHandler => {
    return guard(async function checkRole (request) {
      const caller = request.caller
      if (!caller.authenticated) {
        throw unauthorized(caller.invalidKey ? 'The API key is not valid.' : 'A valid API key is required.')
      }
      if (!hasRole(caller, ...roles)) throw forbidden(`This requires the ${roles.join(' or ')} role.`)
    })
  })
}, { name: 'auth', dependencies: ['config'], fastify: '5.x' })
