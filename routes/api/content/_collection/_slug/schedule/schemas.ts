import { Type, type Static } from '@sinclair/typebox'
import { errorResponses } from '../../../../../../types/errors.js'
import { EntryParams } from '../schemas.js'
import { ScopeQuery, writeSecurity } from '../../schemas.js'
import { Schedule, ScheduleAction } from '../../../../schedules/schemas.js'

export const ScheduleBody = Type.Object({
  action: ScheduleAction,
  at: Type.String({ description: 'An ISO 8601 date-time with a time zone (`2030-01-31T09:00:00Z`), not in the past; otherwise 422' })
}, { additionalProperties: false })
export type ScheduleBody = Static<typeof ScheduleBody>

export const createSchema = {
  tags: ['schedules'],
  summary: 'Schedule a publish or unpublish of an entry',
  description: 'At its time (within 5 s), the action runs once through the normal update rules (validation, events, cache, change feed), ' +
    'even with several replicas or after a restart; a failure is kept (`GET /api/schedules?status=failed`). ' +
    'Deleting the entry cancels its schedules. Requires ContentWrite.',
  security: writeSecurity,
  params: EntryParams,
  querystring: ScopeQuery,
  body: ScheduleBody,
  response: {
    201: Schedule,
    ...errorResponses(400, 401, 403, 404, 413, 415, 422)
  }
}
