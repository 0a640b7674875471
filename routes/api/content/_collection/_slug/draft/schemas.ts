import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../../../../types/errors.js'
import { Entry } from '../../../../../../types/content.js'
import { EntryBody, ScopeQuery, writeSecurity } from '../../schemas.js'
import { EntryParams } from '../schemas.js'
import { EDITORIAL_READ } from '../versions/schemas.js'

export { EntryParams }

export const DraftEntry = Type.Object(Entry.properties, {
  additionalProperties: true,
  description: 'The pending draft as an entry: `_status` is `draft`, `_updated_at` its last save, then the fields a publish would store'
})

export const putDraftSchema = {
  tags: ['workflow'],
  summary: 'Save a pending draft of a published entry',
  description: 'The body replaces the fields as a PUT does (readonly and auto fields left out keep their value; `_slug` and `_status` are ignored) and is validated as an update, ' +
    'but the live entry, lists, cached answers, the change feed and anonymous reads stay as they are until it is published: no event, no version. ' +
    'A draft entry is a 409 (edit it directly). Requires ContentWrite.',
  security: writeSecurity,
  params: EntryParams,
  querystring: ScopeQuery,
  body: EntryBody,
  response: {
    200: DraftEntry,
    ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422)
  }
}

export const getDraftSchema = {
  tags: ['workflow'],
  summary: 'Read the pending draft of an entry',
  description: 'Not found when the entry has none. ' + EDITORIAL_READ,
  params: EntryParams,
  querystring: ScopeQuery,
  response: {
    200: DraftEntry,
    ...errorResponses(400, 401, 404)
  }
}

export const deleteDraftSchema = {
  tags: ['workflow'],
  summary: 'Discard the pending draft of an entry',
  description: 'Not found when the entry has none. The live entry is unchanged. Requires ContentWrite.',
  security: writeSecurity,
  params: EntryParams,
  querystring: ScopeQuery,
  response: {
    204: Type.Null({ description: 'Discarded' }),
    ...errorResponses(400, 401, 403, 404)
  }
}

export const publishDraftSchema = {
  tags: ['workflow'],
  summary: 'Publish the pending draft of an entry',
  description: 'A normal update with the draft\'s fields and `_status: published` (validated against the current schema, unique and reference checks, cache, change feed, ' +
    '`content.updated`, a new version); the draft is gone. Not found when the entry has none. Requires ContentWrite.',
  security: writeSecurity,
  params: EntryParams,
  querystring: ScopeQuery,
  response: {
    200: Entry,
    ...errorResponses(400, 401, 403, 404, 422)
  }
}
