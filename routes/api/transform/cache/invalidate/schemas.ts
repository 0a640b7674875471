import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../../../types/errors.js'

export const InvalidateBody = Type.Object({
  path: Type.Optional(Type.String({ minLength: 1, maxLength: 600, description: "An asset's path (/api/assets/...): only its variants. Absent: every variant" }))
}, { additionalProperties: false })

export const InvalidateQuery = Type.Object({
  _environment: Type.Optional(Type.String({ description: 'The environment of `path`; missing or unknown selects the first configured environment' }))
})

export const InvalidateReply = Type.Object({
  removed: Type.Integer({ minimum: 0, description: 'How many cached variants were removed' })
}, { additionalProperties: false })

export const invalidateSchema = {
  tags: ['assets'],
  summary: 'Flush the image transform cache',
  description: 'Body {} flushes every variant (every environment); { "path": "/api/assets/..." } only that asset\'s. Needs AssetsWrite.',
  querystring: InvalidateQuery,
  body: InvalidateBody,
  response: { 200: InvalidateReply, ...errorResponses(400, 401, 403) }
}
