import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { SESSION_COOKIE, sessionCookie } from '../../../lib/auth.js'
import { unauthorized } from '../../../lib/errors.js'
import { getSessionSchema, signInSchema, signOutEverywhereSchema, signOutSchema, type SessionReply } from './schemas.js'

/** The cookie's attributes: only this site's own requests carry it (SameSite=Strict), no page script reads it. */
function setCookie (request: FastifyRequest, reply: FastifyReply, value: string, maxAge: number): void {
  const secure = request.protocol === 'https' ? '; Secure' : ''
  reply.header('set-cookie', `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure}`)
}

const session: FastifyPluginAsyncTypebox = async (fastify) => {
  const { sessions } = fastify
  const previewUrl = fastify.config.previewUrl

  fastify.get('/', { schema: getSessionSchema }, async (request): Promise<SessionReply> => {
    const { caller } = request
    const token = sessionCookie(request.headers.cookie)
    const hasKeyHeader = request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined
    // The role came from the cookie when no key header was sent and the cookie made the caller known.
    const claims = sessions === null || token === null || hasKeyHeader || !caller.authenticated ? null : sessions.signer.verify(token, Date.now())
    return {
      role: caller.role,
      keys: sessions !== null,
      session: claims !== null,
      csrf: claims === null || token === null ? null : sessions?.signer.csrf(token) ?? null,
      expires_at: claims === null ? null : new Date(claims.expiresAt * 1000).toISOString(),
      preview_url: previewUrl
    }
  })

  fastify.post('/', { schema: signInSchema }, async (request, reply): Promise<SessionReply> => {
    const base = { keys: sessions !== null, preview_url: previewUrl }
    if (sessions === null) return { ...base, role: 'admin', session: false, csrf: null, expires_at: null }
    const started = sessions.start(request.body.key)
    if (started === null) throw unauthorized('The API key is not valid.')
    setCookie(request, reply, started.token, sessions.hours * 3600)
    return { ...base, role: started.role, session: true, csrf: started.csrf, expires_at: new Date(started.expiresAt * 1000).toISOString() }
  })

  fastify.delete('/', { schema: signOutSchema }, async (request, reply) => {
    setCookie(request, reply, '', 0)
    reply.code(204)
    return null
  })

  fastify.post('/revoke', { schema: signOutEverywhereSchema, preHandler: fastify.requireRole('admin') }, async (request, reply) => {
    await sessions?.rotate()
    setCookie(request, reply, '', 0)
    reply.code(204)
    return null
  })
}

export default session
