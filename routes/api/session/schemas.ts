import { Type, type Static } from '@sinclair/typebox'
import { errorResponses } from '../../../types/errors.js'

const Role = Type.Union([Type.Literal('admin'), Type.Literal('editor'), Type.Literal('viewer')])
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

/** What the admin needs to know about whoever calls, and the settings it shows (an extension). */
export const SessionReply = Type.Object({
  role: Nullable(Role),
  keys: Type.Boolean({ description: 'Whether API keys are configured; without them every caller is admin and there is nothing to sign in to' }),
  session: Type.Boolean({ description: 'Whether the caller is signed in by a session cookie (not by a key header)' }),
  csrf: Nullable(Type.String({ description: 'The session\'s CSRF token: send it as `X-CSRF-Token` with every write made with the cookie' })),
  expires_at: Nullable(Type.String({ format: 'date-time', description: 'When the session ends (UTC)' })),
  preview_url: Nullable(Type.String({ description: 'CMS_PREVIEW_URL: the site\'s preview page, with {collection}, {slug}, {locale}, {environment}' }))
}, { additionalProperties: false })
export type SessionReply = Static<typeof SessionReply>

export const SignInBody = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 1024, description: 'An API key (CMS_API_KEY or CMS_API_KEYS)' })
}, { additionalProperties: false })

const COOKIE = 'Sets (or clears) the `lectern_session` cookie: `HttpOnly`, `SameSite=Strict`, `Path=/`, `Secure` over HTTPS.'
// Documentation only (the OpenAPI document's response headers): the routes set it.
const setCookie = { 'Set-Cookie': Type.String({ description: 'The `lectern_session` cookie (set on sign-in, cleared on sign-out)' }) }
const NoBody = Type.Null({ description: 'No body', headers: setCookie })

export const getSessionSchema = {
  tags: ['session'],
  summary: 'Who is calling',
  description: 'The caller\'s role (from a key header or the session cookie), the session\'s CSRF token and expiry, and the preview URL setting. Never 401.',
  response: { 200: SessionReply }
}

export const signInSchema = {
  tags: ['session'],
  summary: 'Sign in: exchange a key for a session cookie',
  description: `${COOKIE} The cookie counts as the key did, for every route, until it expires (CMS_SESSION_HOURS) or is signed out; writes made with it need the \`X-CSRF-Token\` header. A key that is not configured: 401. Without configured keys: 200 with role admin and no cookie.`,
  body: SignInBody,
  response: { 200: Type.Object(SessionReply.properties, { additionalProperties: false, headers: setCookie }), ...errorResponses(400, 401) }
}

export const signOutSchema = {
  tags: ['session'],
  summary: 'Sign out this browser',
  description: COOKIE,
  response: { 204: NoBody }
}

export const signOutEverywhereSchema = {
  tags: ['session'],
  summary: 'Sign out every session, everywhere',
  description: 'A new session secret: every session cookie (every browser, every replica) stops counting. API keys are not affected. Admin role.',
  response: { 204: NoBody, ...errorResponses(401, 403) }
}
