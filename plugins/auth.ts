// API keys and roles (contract §3), and the admin's session cookies (lib/auth.ts): the secret
// that signs them is kept like the sync key (lib/session-secret.ts); with PostgreSQL a rotation
// on one replica is announced on the cluster bus, and every other reads the new one.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import { CSRF_HEADER, KeyRing, SessionSigner, can, hasRole, sessionCookie, type Caller, type Permission } from '../lib/auth.js'
import type { Role } from '../lib/config.js'
import { forbidden, unauthorized } from '../lib/errors.js'
import { fileSessionSecret, sharedSessionSecret, type SessionSecretStore } from '../lib/session-secret.js'
import { PostgresStore } from '../lib/store/postgres.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** A preHandler that answers 401 (no or unknown key) or 403 (role lacks it) unless the caller has `permission`. */
    requirePermission: (permission: Permission) => preHandlerAsyncHookHandler
    /** A preHandler that answers 401 (no or unknown key) or 403 (another role) unless the caller's role is one of `roles`. */
    requireRole: (...roles: Role[]) => preHandlerAsyncHookHandler
    /** Whether a hook is one of the guards above (the OpenAPI document declares security where one runs). */
    isKeyGuard: (hook: unknown) => boolean
  }
  interface FastifyInstance {
    /** Admin sessions: null when no API keys are configured (everyone is admin, nothing to sign in to). */
    sessions: Sessions | null
  }
  interface FastifyRequest {
    /** Who is calling, from the Authorization or X-API-Key header (resolved once, on first use). */
    readonly caller: Caller
  }
}

const kCaller = Symbol('caller')
const SESSION_TOPIC = 'session'
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export interface StartedSession {
  token: string
  csrf: string
  role: Role
  /** Seconds since the epoch. */
  expiresAt: number
}

export interface Sessions {
  /** Hours a session lasts (CMS_SESSION_HOURS). */
  readonly hours: number
  /** The signer of the current secret. */
  readonly signer: SessionSigner
  /** A session for a configured key; null when the key is not one. */
  start: (key: string) => StartedSession | null
  /** A new secret: every session, on every replica, is signed out. */
  rotate: () => Promise<void>
}

async function makeSessions (fastify: FastifyInstance, ring: KeyRing): Promise<Sessions> {
  const { store, cluster, config } = fastify
  const secrets: SessionSecretStore = store instanceof PostgresStore ? sharedSessionSecret(store) : fileSessionSecret(config.dataDir)
  let signer = new SessionSigner(await secrets.load())
  const reload = (): void => {
    secrets.load().then(secret => { signer = new SessionSigner(secret) }, (err: unknown) => {
      fastify.log.error({ err }, 'could not read the session secret after a rotation elsewhere; sessions keep the old one')
    })
  }
  const unsubscribe = cluster.subscribe(message => { if (message.topic === SESSION_TOPIC) reload() })
  const unresync = cluster.onResync(reload)
  fastify.addHook('onClose', async () => { unsubscribe(); unresync() })
  return {
    hours: config.sessionHours,
    get signer () { return signer },
    start (key) {
      const keyId = ring.keyId(key, signer.secret)
      const role = keyId === null ? null : ring.roleOfKeyId(keyId, signer.secret)
      if (keyId === null || role === null) return null
      const expiresAt = Math.floor(Date.now() / 1000) + config.sessionHours * 3600
      const token = signer.issue(keyId, expiresAt)
      return { token, csrf: signer.csrf(token), role, expiresAt }
    },
    async rotate () {
      signer = new SessionSigner(await secrets.rotate())
      await cluster.publish(SESSION_TOPIC, {})
    }
  }
}

/** 401 for a caller with no valid credentials, saying why. */
function unauthenticated (caller: Caller): Error {
  return unauthorized(caller.refusal ?? (caller.invalidKey ? 'The API key is not valid.' : 'A valid API key is required.'))
}

export default fp(async (fastify) => {
  const ring = new KeyRing(fastify.config.apiKeys)
  const sessions = ring.enabled ? await makeSessions(fastify, ring) : null
  fastify.decorate('sessions', sessions)
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
        const csrf = this.headers[CSRF_HEADER]
        caller = ring.resolveRequest({
          authorization: this.headers.authorization,
          apiKey: Array.isArray(apiKey) ? apiKey[0] : apiKey,
          session: sessionCookie(this.headers.cookie),
          csrf: Array.isArray(csrf) ? csrf[0] : csrf,
          unsafe: !SAFE_METHODS.has(this.method)
        }, sessions?.signer ?? null, Date.now())
        kept[kCaller] = caller
      }
      return caller
    }
  })

  fastify.decorate('requirePermission', (permission: Permission): preHandlerAsyncHookHandler => {
    return guard(async function checkPermission (request) {
      const caller = request.caller
      if (!caller.authenticated) throw unauthenticated(caller)
      if (!can(caller, permission)) throw forbidden(`The '${caller.role ?? 'anonymous'}' role lacks the ${permission} permission.`)
    })
  })

  fastify.decorate('requireRole', (...roles: Role[]): preHandlerAsyncHookHandler => {
    return guard(async function checkRole (request) {
      const caller = request.caller
      if (!caller.authenticated) throw unauthenticated(caller)
      if (!hasRole(caller, ...roles)) throw forbidden(`This requires the ${roles.join(' or ')} role.`)
    })
  })
}, { name: 'auth', dependencies: ['config', 'data', 'cluster', 'store'], fastify: '5.x' })
