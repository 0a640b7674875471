import { Type, type Static } from '@sinclair/typebox'
import { errorResponses } from '../../../../../../types/errors.js'
import { EntryParams } from '../schemas.js'

/** interface.md "Referrer": an entry that references the one in the path. */
export const Referrer = Type.Object({
  collection: Type.String({ description: 'The collection of the referencing entry' }),
  slug: Type.String({ description: 'The slug of the referencing entry' }),
  field: Type.String({ description: 'The field holding the reference (a dotted path for a nested field)' }),
  locale: Type.Union([Type.String(), Type.Null()], { description: 'The locale of both entries; null when locales are off' }),
  title: Type.Union([Type.String(), Type.Null()], {
    description: "An extension: the referencing entry's `display_field` value, in its locale; null when its schema has none, the value is not text, or it is a draft the caller may not see"
  })
}, { additionalProperties: false })
export type Referrer = Static<typeof Referrer>

export const ReferrerList = Type.Array(Referrer, {
  description: 'Sorted by collection, slug, locale and field',
  // Documentation only (the OpenAPI document's response headers): the route sets it.
  headers: { 'X-Total-Count': Type.String({ description: 'How many referrer records there are in all (for paging)' }) }
})

/** Paging is an extension: without `_per_page` the answer is the whole list, as interface.md has it. */
export const ReferrersQuery = Type.Object({
  _page: Type.Optional(Type.Integer({ minimum: 1, description: '1-based page (with `_per_page`), default 1' })),
  _per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Records per page, 1 to 1000; absent: every record' }))
})

export const referrersSchema = {
  tags: ['content'],
  summary: 'List the entries that reference an entry',
  description: 'From the reverse-reference index, across every locale. No permission check and no `_locale` or `_environment` parameter. ' +
    'An entry nobody references (or that does not exist) has an empty list; with environments configured the index is not kept and the list is always empty. ' +
    'An unknown or reusable collection is not found. `_page` and `_per_page` page the list (the total is in `X-Total-Count`); each record carries the referencing entry\'s `title`.',
  params: EntryParams,
  querystring: ReferrersQuery,
  response: {
    200: ReferrerList,
    ...errorResponses(400, 404)
  }
}
