import { Type, type Static } from '@sinclair/typebox'
import { errorResponses } from '../../../../../../types/errors.js'
import { EntryParams } from '../schemas.js'

/** interface.md "Referrer": an entry that references the one in the path. */
export const Referrer = Type.Object({
  collection: Type.String({ description: 'The collection of the referencing entry' }),
  slug: Type.String({ description: 'The slug of the referencing entry' }),
  field: Type.String({ description: 'The field holding the reference (a dotted path for a nested field)' }),
  locale: Type.Union([Type.String(), Type.Null()], { description: 'The locale of both entries; null when locales are off' })
}, { additionalProperties: false })
export type Referrer = Static<typeof Referrer>

export const ReferrerList = Type.Array(Referrer, { description: 'Sorted by collection, slug, locale and field' })

export const referrersSchema = {
  tags: ['content'],
  summary: 'List the entries that reference an entry',
  description: 'From the reverse-reference index, across every locale. No permission check and no `_locale` or `_environment` parameter. ' +
    'An entry nobody references (or that does not exist) has an empty list; with environments configured the index is not kept and the list is always empty. ' +
    'An unknown or reusable collection is not found.',
  params: EntryParams,
  response: {
    200: ReferrerList,
    ...errorResponses(400, 404)
  }
}
