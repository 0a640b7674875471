import { Type, type Static } from '@sinclair/typebox'
import { errorResponses } from '../../../../../../types/errors.js'
import { Entry } from '../../../../../../types/content.js'
import { scopeParameters } from '../../schemas.js'
import { EntryParams } from '../schemas.js'

export { EntryParams }

/** One kept version as listed (contract §13). */
export const VersionItem = Type.Object({
  version: Type.Integer({ minimum: 1, description: '1 for the entry\'s first version, one more per write' }),
  status: Type.Union([Type.Literal('draft'), Type.Literal('published')], { description: 'The entry\'s `_status` at that version' }),
  created_at: Type.String({ format: 'date-time', description: 'When the version was written (ISO 8601 UTC)' })
}, { additionalProperties: false })

export const VersionList = Type.Object({
  items: Type.Array(VersionItem, { description: 'Newest first' }),
  total: Type.Integer({ minimum: 0, description: 'Versions kept' }),
  page: Type.Integer({ minimum: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: 1000 }),
  pages: Type.Integer({ minimum: 0, description: 'ceil(total / per_page); 0 when none is kept' })
}, { additionalProperties: false })
export type VersionList = Static<typeof VersionList>

/** An entry as it was at a version: the single-entry view, plus `_version`. */
export const VersionEntry = Type.Object({
  ...Entry.properties,
  _version: Type.Integer({ minimum: 1, description: 'The version shown' })
}, {
  additionalProperties: true,
  description: 'The entry as it was: system fields (`_updated_at` is when the version was written), `_version`, then the fields it had then'
})

export const VersionsQuery = Type.Object({
  _page: Type.Optional(Type.String({ description: '1-based page, default 1' })),
  _per_page: Type.Optional(Type.String({ description: 'Versions per page, 1 to 1000, default 20' })),
  ...scopeParameters
})

/** Editorial routes need a valid key when keys are on, reads included (contract §13). */
export const EDITORIAL_READ = 'Needs a valid key of any role when API keys are enabled (401 without one: an editorial route, not a content read).'

export const versionsSchema = {
  tags: ['workflow'],
  summary: 'List an entry\'s kept versions',
  description: 'Newest first, at most `CMS_REVISIONS` (default 50) per entry; none when it is 0. Versions outlive the entry\'s delete; ' +
    'an unknown collection, or a slug with no entry and no kept version, is not found. ' + EDITORIAL_READ,
  params: EntryParams,
  querystring: VersionsQuery,
  response: {
    200: VersionList,
    ...errorResponses(400, 401, 404)
  }
}
