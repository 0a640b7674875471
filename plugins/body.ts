import fp from 'fastify-plugin'
import type { FastifyBodyParser, FastifyInstance } from 'fastify'
import { badRequest } from '../lib/errors.js'
import { MAX_JSON_DEPTH, textDepthExceeds } from '../lib/json-depth.js'

/**
 * The one JSON body parser of every route (content, schemas, webhooks, cache...): Fastify's own
 * (secure-json-parse, refusing `__proto__` and `constructor.prototype`, under the body limit),
 * preceded by the nesting limit, checked on the text in one pass, so a body nested too deep is a
 * 400 before it is parsed and never reaches a recursive step. JSON merge patch (RFC 7396) bodies
 * of PATCH are parsed the same way.
 */
function jsonParser (fastify: FastifyInstance): FastifyBodyParser<string> {
  const parse = fastify.getDefaultJsonParser('error', 'error')
  return function parseJsonBody (request, body, done) {
    if (textDepthExceeds(body, MAX_JSON_DEPTH)) {
      done(badRequest(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`), undefined)
      return
    }
    parse(request, body, done)
  }
}

export default fp(async (fastify) => {
  const parser = jsonParser(fastify)
  fastify.removeContentTypeParser('application/json')
  fastify.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, parser)
}, { name: 'body', fastify: '5.x' })
