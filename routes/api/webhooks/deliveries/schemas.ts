import { Type, type Static } from '@sinclair/typebox'
import { ListEnvelope, pagingParameters } from '../../../../types/content.js'

export const DeliveryStatus = Type.Union([
  Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')
], { description: 'pending: waiting for its next attempt; delivered: a 2xx answer; failed: a final error or attempts exhausted' })

export const EventName = Type.Union([
  Type.Literal('schema.created'), Type.Literal('schema.updated'), Type.Literal('schema.deleted'),
  Type.Literal('content.created'), Type.Literal('content.updated'), Type.Literal('content.deleted'),
  Type.Literal('asset.created'), Type.Literal('asset.deleted')
])

export const Delivery = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The delivery id, sent as X-Webhook-Id and in the payload' }),
  event: EventName,
  url: Type.String({ description: 'The receiver; credentials in the URL are masked' }),
  status: DeliveryStatus,
  attempts: Type.Integer({ minimum: 0 }),
  last_status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status of the last attempt; null when no answer' }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt did not deliver' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Null once finished' })
}, { additionalProperties: false })
export type Delivery = Static<typeof Delivery>

export const DeliveriesQuery = Type.Object({
  ...pagingParameters,
  status: Type.Optional(DeliveryStatus)
})
export type DeliveriesQuery = Static<typeof DeliveriesQuery>

/** The list envelope of contract §4, newest delivery first. */
export const DeliveriesReply = ListEnvelope(Delivery)
export type DeliveriesReply = Static<typeof DeliveriesReply>
