import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { seesDrafts } from '../../../../../../lib/auth.js'
import { referrersSchema, type Referrer } from './schemas.js'

const referrersRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { schema: referrersSchema }, async (request, reply): Promise<Referrer[]> => {
    const { collection, slug } = request.params
    const { _page: page = 1, _per_page: perPage } = request.query
    const all = await fastify.references.referrers(collection, slug)
    // Without `_per_page`, the whole list (interface.md); with it, one page. The count rides in a header.
    const slice = perPage === undefined ? (page === 1 ? all : []) : all.slice((page - 1) * perPage, page * perPage)
    const titles = await fastify.references.referrerTitles(slice, seesDrafts(request.caller))
    reply.header('x-total-count', String(all.length))
    return slice.map((r, i) => ({ ...r, title: titles[i] ?? null }))
  })
}

export default referrersRoutes
