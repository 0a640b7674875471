import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../types/errors.js'
import { Entry } from '../../../types/content.js'

// Values stay strings: lib/sync/request.ts checks them and answers a 400 naming the parameter
// (unknown parameters too, so additional ones reach it).
export const SyncQuerystring = Type.Object({
  initial: Type.Optional(Type.String({ description: '`true`: start a sync; every visible entry once, as `upsert`' })),
  cursor: Type.Optional(Type.String({ description: 'Go on from an earlier answer (the latest or an older one); only `_per_page` may come with it' })),
  collections: Type.Optional(Type.String({ description: 'Comma list of collections (default: all); fixed at `initial`' })),
  _status: Type.Optional(Type.String({ description: '`published` or `all`; default `all` with a valid key, always `published` without one; fixed at `initial`' })),
  _per_page: Type.Optional(Type.String({ description: 'Items per answer, 1 to 1000, default 100' })),
  _environment: Type.Optional(Type.String({ description: 'Environment; fixed at `initial`, carried by the cursor' })),
  _locale: Type.Optional(Type.String({ description: 'Locale; fixed at `initial`, carried by the cursor' }))
}, { additionalProperties: true })

const itemHead = {
  collection: Type.String(),
  slug: Type.String(),
  seq: Type.Integer({ minimum: 1, description: 'The seq of the entry\'s latest change (its webhook payload\'s seq)' })
}

export const SyncItem = Type.Union([
  Type.Object({ op: Type.Literal('upsert'), ...itemHead, entry: Entry }, { description: 'The entry exists and is visible: `entry` is exactly the body of GET /api/content/<collection>/<slug>' }),
  Type.Object({ op: Type.Literal('delete'), ...itemHead }, { description: 'The entry is gone, or (in the published view) became a draft' })
])

export const SyncAnswer = Type.Object({
  items: Type.Array(SyncItem),
  cursor: Type.String({ description: 'Opaque: call again with it (at once when `more`, at the next build otherwise)' }),
  more: Type.Boolean({ description: 'true: the run is not complete, call again at once' })
}, {
  // Documentation only (the OpenAPI document's response headers): the route sets it.
  headers: { 'Cache-Control': Type.String({ description: '`no-store`: every answer is for this cursor only' }) }
})

export const syncSchema = {
  tags: ['sync'],
  summary: 'Change feed: every entry once, then only what changed, deletions included',
  description: 'Contract §9. Start with `initial=true`, then follow `cursor` until `more` is false; keep the last cursor for the next run. ' +
    'A 410 CURSOR_EXPIRED means the log no longer covers the cursor: start again with `initial=true`.',
  querystring: SyncQuerystring,
  response: {
    200: SyncAnswer,
    ...errorResponses(400, 410)
  }
}
