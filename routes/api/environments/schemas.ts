import { Type } from '@sinclair/typebox'

/** contract.md §14: the environments a client may name, so none has to be typed free-hand. */
export const EnvironmentsReply = Type.Object({
  environments: Type.Array(Type.String(), { description: 'CMS_ENVIRONMENTS in order; `["default"]` when it is unset' }),
  default: Type.String({ description: 'The first environment: the one a request without `?env=` reads and writes' })
}, { additionalProperties: false })

export const environmentsSchema = {
  tags: ['discovery'],
  summary: 'List the configured environments',
  response: { 200: EnvironmentsReply }
}
