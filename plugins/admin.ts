// Serves the admin UI (admin/dist, built by `npm run build:admin`) under /admin/. The UI is a
// single-page app: a deep link such as /admin/content/post/entry/hello answers index.html and
// the app routes in the browser. Without a build, /admin answers 503 and says how to make one;
// the API starts regardless. The build writes a .br and a .gz beside each text file of 1 KB or
// more (admin/vite.config.ts), sent as they are to a browser that accepts them (contract §11).
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import fp from 'fastify-plugin'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
// For the `hide` route-schema option (OpenAPI): these routes serve a page, not the API.
import type {} from '@fastify/swagger'
import { CmsError, errorBody } from '../lib/errors.js'

export interface AdminPluginOptions {
  /** The built UI; found from the project root when absent (tests point it elsewhere). */
  adminDist?: string
}

/** The project root: the nearest folder upwards with a package.json (works from source and from dist/). */
export function projectRoot (from: string): string | null {
  let dir = from
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) return null
    dir = parent
  }
}

export function defaultAdminDist (from: string = import.meta.dirname): string | null {
  const root = projectRoot(from)
  return root === null ? null : path.join(root, 'admin', 'dist')
}

// The page loads only its own scripts and styles; it talks only to this server; nobody frames it.
// Images may come from anywhere (markdown previews show external images).
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  'img-src * data: blob:',
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join('; ')

function htmlHeaders (reply: FastifyReply): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
}

/** A path whose last segment has no extension is an app route, not a file. */
const isAppRoute = (url: string): boolean => {
  const pathname = url.split('?')[0] ?? ''
  const last = pathname.split('/').pop() ?? ''
  return !last.includes('.')
}

async function adminRoutes (admin: FastifyInstance, dist: string | null): Promise<void> {
  const index = dist === null ? null : path.join(dist, 'index.html')

  if (dist === null || index === null || !existsSync(index)) {
    admin.log.warn('admin UI is not built (admin/dist is missing): /admin answers 503; run `npm run build`')
    const unavailable = async (): Promise<never> => {
      throw new CmsError('UNAVAILABLE', 'The admin UI is not built. Run `npm run build` (or `npm run build:admin`) and restart the server.')
    }
    admin.get('/', { schema: { hide: true } }, unavailable)
    admin.get('/*', { schema: { hide: true } }, unavailable)
    return
  }

  const sendIndex = async (reply: FastifyReply): Promise<FastifyReply> => {
    // Read per request: a rebuild (new hashed asset names) is picked up without a restart.
    const html = await readFile(index)
    return await htmlHeaders(reply).send(html)
  }

  // The router ignores trailing slashes, so /admin and /admin/ both arrive here: only the
  // bare form is redirected, so relative URLs in the page resolve under /admin/.
  admin.get('/', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
    const pathname = request.raw.url?.split('?')[0] ?? ''
    if (!pathname.endsWith('/')) {
      const query = request.raw.url?.slice(pathname.length) ?? ''
      return await reply.redirect(`${pathname}/${query}`, 301)
    }
    return await sendIndex(reply)
  })

  await admin.register(fastifyStatic, {
    root: dist,
    prefix: '/',
    // Another plugin (assets) may register @fastify/static too: only one may decorate the reply.
    decorateReply: false,
    index: ['index.html'],
    // Deep links are answered below, not by directory listings or redirects.
    redirect: false,
    cacheControl: false,
    // Without CMS_COMPRESSION, the files are sent as built.
    preCompressed: admin.config.compression,
    setHeaders (reply, sentPath) {
      // The built file's path, when its .br or .gz is sent.
      const filePath = sentPath.replace(/\.(?:br|gz)$/, '')
      // Vite names built files by content hash: they never change under one name.
      reply.header('cache-control', filePath.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache')
      if (filePath.endsWith('.html')) reply.header('content-security-policy', CSP)
      reply.header('x-content-type-options', 'nosniff')
    }
  })

  // Files that do not exist fall through to here: app routes get the page, the rest a 404.
  admin.setNotFoundHandler(async (request, reply) => {
    const url = request.raw.url ?? ''
    if ((request.method === 'GET' || request.method === 'HEAD') && isAppRoute(url)) return await sendIndex(reply)
    return await reply.code(404).send(errorBody(404, `Route ${request.method} ${url.split('?')[0] ?? ''} not found.`))
  })
}

export default fp<AdminPluginOptions>(async (fastify, opts) => {
  const dist = opts.adminDist ?? defaultAdminDist()
  await fastify.register(async admin => { await adminRoutes(admin, dist) }, { prefix: '/admin' })
}, { name: 'admin', dependencies: ['config'], fastify: '5.x' })
