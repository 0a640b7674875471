// How each route reads in the OpenAPI document (contract §15), decided once for every route
// from what the route itself declares, so no route file has to repeat it: plain path-parameter
// names, an operationId, security only where a key guard runs, and no 401/403 when keys are off.

/** A route as @fastify/swagger's `transform` hands it over (the subset read here). */
export interface RouteInput {
  schema?: Record<string, unknown>
  url: string
  route: { method: string | string[], onRequest?: unknown, preHandler?: unknown }
}

export interface RouteOptions {
  /** Whether API keys are configured (CMS_API_KEYS). */
  keysEnabled: boolean
  /** Whether a hook is a key guard (plugins/auth.ts `requirePermission` or `requireRole`). */
  isKeyGuard: (hook: unknown) => boolean
}

/** The name a wildcard path parameter takes in the document: `/api/assets/{path}`. */
export const WILDCARD_NAME = 'path'

/** A key is required (`Authorization: Bearer` or `X-API-Key`). */
export const KEY_REQUIRED: ReadonlyArray<Record<string, string[]>> = [{ bearer: [] }, { apiKey: [] }]
/** A key is optional: without one, a read sees what anonymous callers see (published entries). */
export const KEY_OPTIONAL: ReadonlyArray<Record<string, string[]>> = [{}, { bearer: [] }, { apiKey: [] }]

const hooksOf = (value: unknown): unknown[] => Array.isArray(value) ? value : value === undefined ? [] : [value]

/** Whether the route runs a key guard in onRequest or preHandler. */
export function needsKey (route: RouteInput['route'], isKeyGuard: (hook: unknown) => boolean): boolean {
  return [...hooksOf(route.onRequest), ...hooksOf(route.preHandler)].some(isKeyGuard)
}

const pascal = (word: string): string =>
  word.split(/[^A-Za-z0-9]+/).filter(w => w !== '').map(w => w[0]?.toUpperCase() + w.slice(1)).join('')

/**
 * A stable operationId from the method and the documented path: `GET /api/content/{collection}/{slug}`
 * gives `getContentByCollectionBySlug`; `/api` is left out as every path but /health has it.
 */
export function operationId (method: string, path: string): string {
  const words = path.split('/').filter(s => s !== '' && s !== 'api').map(segment => {
    const param = /^\{(.+)\}$/.exec(segment)
    return param?.[1] !== undefined ? `By${pascal(param[1])}` : pascal(segment)
  })
  return method.toLowerCase() + (words.length === 0 ? 'Root' : words.join(''))
}

/** `/api/assets/*` as `/api/assets/:path` (Fastify notation: @fastify/swagger turns it into `{path}`). */
export function plainUrl (url: string): string {
  return url.endsWith('/*') ? `${url.slice(0, -1)}:${WILDCARD_NAME}` : url
}

/** The params schema with the wildcard `*` renamed, and told how to send a `/`. */
function renameWildcard (params: unknown): unknown {
  if (typeof params !== 'object' || params === null) return params
  const p = params as { properties?: Record<string, Record<string, unknown>>, required?: string[] }
  const star = p.properties?.['*']
  if (star === undefined) return params
  const { '*': _, ...others } = p.properties ?? {}
  const description = `${String(star.description ?? 'A path')}; may hold \`/\`, sent as \`%2F\``
  return {
    ...p,
    properties: { ...others, [WILDCARD_NAME]: { ...star, description } },
    required: (p.required ?? ['*']).map(r => r === '*' ? WILDCARD_NAME : r)
  }
}

function withoutAuthErrors (response: unknown): unknown {
  if (typeof response !== 'object' || response === null) return response
  return Object.fromEntries(Object.entries(response).filter(([status]) => status !== '401' && status !== '403'))
}

/** The route's schema and URL as the document shows them. */
export function describeRoute (input: RouteInput, options: RouteOptions): { schema: Record<string, unknown>, url: string } {
  const schema: Record<string, unknown> = { ...input.schema }
  const url = plainUrl(input.url)
  const method = Array.isArray(input.route.method) ? String(input.route.method[0]) : input.route.method
  schema.operationId = operationId(method, url.replace(/:([^/]+)/g, '{$1}'))
  if (schema.params !== undefined) schema.params = renameWildcard(schema.params)
  // A multipart body is parsed by the route, not validated by Fastify: it is documented apart.
  if (schema.multipartBody !== undefined) {
    schema.body = schema.multipartBody
    delete schema.multipartBody
  }
  if (!options.keysEnabled) {
    delete schema.security
    schema.response = withoutAuthErrors(schema.response)
  } else {
    schema.security = needsKey(input.route, options.isKeyGuard) ? KEY_REQUIRED : KEY_OPTIONAL
  }
  return { schema, url }
}
