import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../../../../../types/errors.js'
import { Entry } from '../../../../../../../types/content.js'
import { ScopeQuery, writeSecurity } from '../../../schemas.js'
import { EDITORIAL_READ, EntryParams, VersionEntry } from '../schemas.js'

export const VersionParams = Type.Object({
  ...EntryParams.properties,
  n: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The version number' })
})

export const versionSchema = {
  tags: ['workflow'],
  summary: 'Read an entry as it was at a version',
  description: 'As the single-entry read shows it, without `_resolve`, plus `_version`. A version no longer kept is not found. ' + EDITORIAL_READ,
  params: VersionParams,
  querystring: ScopeQuery,
  response: {
    200: VersionEntry,
    ...errorResponses(400, 401, 404)
  }
}

export const restoreSchema = {
  tags: ['workflow'],
  summary: 'Restore an entry to a version',
  description: 'A normal update with that version\'s fields and `_status`: validated against the current schema, unique and reference checks, ' +
    'the cache discarded, a change in the feed, `content.updated` and a new version. When the entry was deleted since, it is created again ' +
    '(`content.created`). Requires ContentWrite.',
  security: writeSecurity,
  params: VersionParams,
  querystring: ScopeQuery,
  response: {
    200: Entry,
    ...errorResponses(400, 401, 403, 404, 422)
  }
}
