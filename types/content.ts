// Entries and lists as the API sends them (contract §4).
import { Type, type Static, type TSchema } from '@sinclair/typebox'

/** An entry in a response: the system fields, then the collection's data fields. */
export const Entry = Type.Object({
  _slug: Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 200, description: 'Identifier within the collection' }),
  _status: Type.Union([Type.Literal('draft'), Type.Literal('published')], { description: 'Publication state' }),
  _created_at: Type.String({ format: 'date-time', description: 'ISO 8601 UTC, kept by the store' }),
  _updated_at: Type.String({ format: 'date-time', description: 'ISO 8601 UTC, kept by the store' })
}, { additionalProperties: true, description: 'An entry: system fields, then the fields of its collection schema' })
export type Entry = Static<typeof Entry>

/** The `<collection>` path parameter of /api/content/<collection> and /api/collections/<collection>. */
export const CollectionParams = Type.Object({
  collection: Type.String({ description: 'A content collection (a non-reusable schema name)' })
})

/**
 * `_page`, `_per_page` and `_after` of every list, kept as strings: lib/query/parse.ts types the
 * first two, so that every list answers a bad or huge value alike (a 400 naming the parameter),
 * and lib/query/keyset.ts reads the cursor.
 */
export const pagingParameters = {
  _page: Type.Optional(Type.String({ description: '1-based page, default 1' })),
  _per_page: Type.Optional(Type.String({ description: 'Items per page, 1 to 1000, default 20' })),
  _after: Type.Optional(Type.String({ description: 'Keyset paging (contract §10): the `next` of the answer before, with the same query; not with `_page`' }))
}

/**
 * The envelope of every list answer (contract §4 and §10): content, asset and webhook delivery
 * lists alike, `page` null on a keyset page and `next` the cursor of the page after.
 */
export function ListEnvelope<T extends TSchema> (item: T) {
  return Type.Object({
    items: Type.Array(item),
    total: Type.Integer({ minimum: 0, description: 'Matching items across all pages' }),
    page: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'The page number; null with `_after`' }),
    per_page: Type.Integer({ minimum: 1, maximum: 1000 }),
    pages: Type.Integer({ minimum: 0, description: 'ceil(total / per_page); 0 when nothing matches' }),
    next: Type.Union([Type.String(), Type.Null()], { description: 'Opaque cursor of the page after this one, for `_after`; null on the last page' })
  }, { additionalProperties: false })
}

/** A content list answer (contract §4). */
export const EntryList = ListEnvelope(Entry)
export type EntryList = Static<typeof EntryList>
