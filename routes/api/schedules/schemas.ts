import { Type, type Static } from '@sinclair/typebox'
import { errorResponses } from '../../../types/errors.js'
import { pagingParameters } from '../../../types/content.js'

export const ScheduleAction = Type.Union([Type.Literal('publish'), Type.Literal('unpublish')], {
  description: '`publish`: applies the pending draft when there is one, else publishes a draft entry; `unpublish`: makes a published entry a draft'
})

export const ScheduleStatus = Type.Union([Type.Literal('pending'), Type.Literal('failed')], {
  description: 'pending: waiting for its time (or running); failed: it ran and failed (see `error`). A schedule that ran is gone'
})

/** A scheduled action (contract §13). */
export const Schedule = Type.Object({
  id: Type.String({ format: 'uuid' }),
  action: ScheduleAction,
  at: Type.String({ format: 'date-time', description: 'When it runs (UTC); it runs within 5 s of that time' }),
  collection: Type.String(),
  slug: Type.String(),
  locale: Type.Union([Type.String(), Type.Null()], { description: 'The entry\'s locale; null when locales are off' }),
  environment: Type.String({ description: 'The entry\'s environment' }),
  status: ScheduleStatus,
  created_at: Type.String({ format: 'date-time' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed, in one line; null while pending' })
}, { additionalProperties: false })
export type Schedule = Static<typeof Schedule>

/** The list envelope of contract §13: `{ items, total, page, per_page, pages }`, soonest first. */
export const ScheduleList = Type.Object({
  items: Type.Array(Schedule),
  total: Type.Integer({ minimum: 0 }),
  page: Type.Integer({ minimum: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: 1000 }),
  pages: Type.Integer({ minimum: 0, description: 'ceil(total / per_page); 0 when nothing matches' })
}, { additionalProperties: false })
export type ScheduleList = Static<typeof ScheduleList>

export const ScheduleListQuery = Type.Object({
  status: Type.Optional(ScheduleStatus),
  _page: pagingParameters._page,
  _per_page: pagingParameters._per_page,
  _environment: Type.Optional(Type.String({ description: 'Only this environment\'s schedules (unknown: the first configured); absent: every environment\'s' })),
  _locale: Type.Optional(Type.String({ description: 'Only this locale\'s schedules (unknown: the first configured, as on the entry routes); absent: every locale\'s' })),
  collection: Type.Optional(Type.String({ minLength: 1, description: 'Only the schedules of entries of this content collection; an unknown collection is a 404' })),
  slug: Type.Optional(Type.String({ minLength: 1, description: 'Only the schedules of the entry with this slug (normalized as in a path; not a slug: 400); needs `collection` (without it: 400)' }))
})

/** With keys on, every schedule route needs a valid key (contract §13: editorial routes, not content reads). */
export const keySecurity: Array<Record<string, string[]>> = [{ bearer: [] }, { apiKey: [] }]

export const listSchema = {
  tags: ['schedules'],
  summary: 'List scheduled actions, soonest first',
  description: 'Pending ones by default; `status=failed` lists those that failed, each with its `error`. ' +
    '`collection`, `slug`, `_locale` and `_environment` keep one collection\'s, one entry\'s, one locale\'s and one environment\'s ' +
    '(`total` and `pages` count those). Any valid key when API keys are configured.',
  security: keySecurity,
  querystring: ScheduleListQuery,
  response: {
    200: ScheduleList,
    ...errorResponses(400, 401, 404)
  }
}

export const ScheduleParams = Type.Object({
  id: Type.String({ description: 'The schedule id' })
})

export const deleteSchema = {
  tags: ['schedules'],
  summary: 'Cancel a scheduled action',
  description: 'Removes a pending or failed schedule. Requires ContentWrite. An unknown id is a 404.',
  security: keySecurity,
  params: ScheduleParams,
  response: {
    204: Type.Null({ description: 'Cancelled' }),
    ...errorResponses(401, 403, 404)
  }
}
