import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../../types/errors.js'
import { CollectionParams, Entry, EntryList, pagingParameters } from '../../../../types/content.js'

export { Entry, EntryList }

/** `_locale` and `_environment`, taken by every content endpoint (interface.md "Endpoints"). */
export const scopeParameters = {
  _locale: Type.Optional(Type.String({ description: 'Locale code; missing or unknown selects the first configured locale' })),
  _environment: Type.Optional(Type.String({ description: 'Environment name; missing or unknown selects the first configured environment' }))
}

export const ScopeQuery = Type.Object(scopeParameters)

/** `_resolve` (contract §4), on single-entry and list reads. */
export const resolveParameter = {
  _resolve: Type.Optional(Type.String({
    description: '`1` or `true`: resolve every reference field one level; `2`..`5`: that many levels (no cycles); ' +
      '`<field>,<field>`: only those reference fields (dotted paths), one level. Also expands asset paths to absolute URLs'
  }))
}

/** The query of a single-entry read: the scope and `_resolve`. */
export const ReadQuery = Type.Object({ ...scopeParameters, ...resolveParameter })

const repeatable = (description: string) => Type.Union([Type.String(), Type.Array(Type.String())], { description })

// Every value stays a string here: the query parser types each one from the collection schema
// and answers a 400 naming the parameter (contract §4 "List").
export const ListQuerystring = Type.Object({
  ...pagingParameters,
  _sort: Type.Optional(repeatable('Comma list of fields (dotted paths allowed); a `-` prefix sorts that field descending; may be repeated')),
  _order: Type.Optional(Type.String({ description: '`asc` (default) or `desc`, for `_sort` fields without a prefix' })),
  _status: Type.Optional(Type.String({ description: '`published`, `draft` or `all`; callers without a valid key always get `published`' })),
  _q: Type.Optional(Type.String({ description: 'Case-insensitive text search across string fields' })),
  _fields: Type.Optional(repeatable('Comma list of fields to return (dotted paths allowed); system fields always come back; may be repeated')),
  ...resolveParameter,
  ...scopeParameters
}, {
  additionalProperties: true,
  description: 'Also `<field>=<value>` (equality; on an array field: contains) and `<field>[<op>]=<value>` with op one of eq ne gt gte lt lte in nin contains starts exists'
})

// `_slug` and `_status` are checked by the write pipeline, in the order interface.md gives
// (after the permission and the collection), so the route schema only fixes the outer shape.
export const EntryBody = Type.Object({
  _slug: Type.Optional(Type.Unknown({ description: 'string, required: the entry slug; normalized before use' })),
  _status: Type.Optional(Type.Unknown({ description: '`draft` or `published` (default)' }))
}, { additionalProperties: true, description: 'The entry: `_slug`, optional `_status`, and the fields of the collection schema' })

/** A write needs a key when keys are enabled: `Authorization: Bearer <key>` or `X-API-Key`. */
export const writeSecurity: Array<Record<string, string[]>> = [{ bearer: [] }, { apiKey: [] }]

export const listSchema = {
  tags: ['content'],
  summary: 'List entries of a collection',
  description: 'Filters, sorting, paging, search and projection (contract §4), and `_resolve` on every item. Answers with an `ETag`; a matching `If-None-Match` gives 304. ' +
    'Answers are cached per environment, collection, query, locale and visibility until a write to a collection they depend on.',
  params: CollectionParams,
  querystring: ListQuerystring,
  response: {
    200: EntryList,
    304: Type.Null({ description: 'Not modified: the `If-None-Match` tag is current' }),
    ...errorResponses(400, 404)
  }
}

export const createSchema = {
  tags: ['content'],
  summary: 'Create an entry',
  description: 'Requires ContentWrite when API keys are enabled. Emits `content.created`.',
  security: writeSecurity,
  params: CollectionParams,
  querystring: ScopeQuery,
  body: EntryBody,
  response: {
    201: Entry,
    ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422)
  }
}
