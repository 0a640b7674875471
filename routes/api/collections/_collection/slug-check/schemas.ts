import { Type, type Static } from '@sinclair/typebox'

export const SlugCheckParams = Type.Object({
  collection: Type.String({ description: 'A content collection' })
})

export const SlugCheckQuery = Type.Object({
  slug: Type.Optional(Type.String({ description: 'The slug to check' })),
  exclude: Type.Optional(Type.String({ description: 'The slug of the entry being edited: it counts as available' })),
  _locale: Type.Optional(Type.String({ description: 'Locale code; missing or unknown selects the first configured locale' })),
  _environment: Type.Optional(Type.String({ description: 'Environment name; missing or unknown selects the first configured environment' }))
})

/** interface.md "Slug check result". */
export const SlugCheckResult = Type.Object({
  valid: Type.Boolean({ description: 'The slug format is acceptable' }),
  normalized: Type.String({ description: 'The normalized slug' }),
  available: Type.Boolean({ description: 'Not used by another entry, or equal to `exclude`' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the slug is not valid, or "Collection not found."; null otherwise' })
})
export type SlugCheckResult = Static<typeof SlugCheckResult>

export const slugCheckSchema = {
  tags: ['content'],
  summary: 'Check a slug',
  description: 'Validates and normalizes a slug and tells whether it is free in the collection, locale and environment. Always 200.',
  params: SlugCheckParams,
  querystring: SlugCheckQuery,
  response: { 200: SlugCheckResult }
}
