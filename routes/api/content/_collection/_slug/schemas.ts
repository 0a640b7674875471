import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../../../types/errors.js'
import { Entry } from '../../../../../types/content.js'
import { EntryBody, ReadQuery, ScopeQuery, writeSecurity } from '../schemas.js'

export { Entry }

export const EntryParams = Type.Object({
  collection: Type.String({ description: 'A content collection (a non-reusable schema name)' }),
  slug: Type.String({ description: 'The entry slug; normalized before use; `/`, `\\` and `..` are refused' })
})

export const getSchema = {
  tags: ['content'],
  summary: 'Read an entry',
  description: 'Answers with an `ETag` (a hash of the body) and `Cache-Control: no-cache`; a matching `If-None-Match` gives 304. A draft is not found for callers without a valid key when keys are enabled. ' +
    '`_resolve` replaces references by the entries they name and expands asset paths; a hidden or missing target is null (single) or left out (multiple). Published entries are served from the response cache.',
  params: EntryParams,
  querystring: ReadQuery,
  response: {
    200: Entry,
    304: Type.Null({ description: 'Not modified: the `If-None-Match` tag is current' }),
    ...errorResponses(400, 404)
  }
}

export const putSchema = {
  tags: ['content'],
  summary: 'Replace an entry',
  description: 'The body replaces the entry\'s fields; readonly and auto fields left out keep their value, an absent `_status` keeps the stored one, `_slug` is ignored. Requires ContentWrite. Emits `content.updated`.',
  security: writeSecurity,
  params: EntryParams,
  querystring: ScopeQuery,
  body: EntryBody,
  response: {
    200: Entry,
    ...errorResponses(400, 401, 403, 404, 413, 415, 422)
  }
}

export const PatchBody = Type.Object({}, {
  additionalProperties: true,
  description: 'A JSON merge patch (RFC 7396) of the entry\'s fields and `_status`: `null` removes a field'
})

export const patchSchema = {
  tags: ['content'],
  summary: 'Patch an entry (JSON merge patch)',
  description: 'Accepts `application/merge-patch+json` and `application/json`. The patched entry then follows every rule of PUT. Requires ContentWrite. Emits `content.updated`.',
  security: writeSecurity,
  consumes: ['application/merge-patch+json', 'application/json'],
  params: EntryParams,
  querystring: ScopeQuery,
  body: PatchBody,
  response: {
    200: Entry,
    ...errorResponses(400, 401, 403, 404, 413, 415, 422)
  }
}

export const deleteSchema = {
  tags: ['content'],
  summary: 'Delete an entry',
  description: 'Requires ContentWrite. A missing entry is a 404. Emits `content.deleted`.',
  security: writeSecurity,
  params: EntryParams,
  querystring: ScopeQuery,
  response: {
    204: Type.Null({ description: 'Deleted' }),
    ...errorResponses(400, 401, 403, 404)
  }
}
