// What a receiver gets (interface.md "Events", contract §6): the event's own fields plus
// `id` and `timestamp`, serialized once and stored, so every retry sends identical bytes;
// the signature is an HMAC-SHA256 of exactly those bytes.
import { createHmac } from 'node:crypto'
import type { CmsEvent, EventName } from '../../types/events.js'

export const EVENT_NAMES: readonly EventName[] = [
  'schema.created', 'schema.updated', 'schema.deleted',
  'content.created', 'content.updated', 'content.deleted',
  'asset.created', 'asset.deleted'
]

export type WebhookPayload = CmsEvent & { id: string, timestamp: string }

/**
 * The payload of one delivery. Fields are picked per kind, never spread, so nothing an
 * emitter happens to attach beyond the contract reaches a receiver.
 */
export function buildPayload (event: CmsEvent, id: string, timestamp: string): WebhookPayload {
  switch (event.event) {
    case 'schema.created':
    case 'schema.updated':
    case 'schema.deleted':
      return { event: event.event, name: event.name, id, timestamp }
    case 'content.created':
    case 'content.updated':
    case 'content.deleted':
      return {
        event: event.event,
        collection: event.collection,
        slug: event.slug,
        locale: event.locale,
        environment: event.environment,
        seq: event.seq,
        status: event.status,
        previous_status: event.previous_status,
        id,
        timestamp
      }
    case 'asset.created':
    case 'asset.deleted':
      return {
        event: event.event,
        path: event.path,
        environment: event.environment,
        size: event.size,
        mime: event.mime,
        id,
        timestamp
      }
  }
}

/** `sha256=<hex HMAC-SHA256 of body>`: the value of X-Webhook-Signature. */
export function signature (body: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/** The request headers of one delivery; the secret headers only when a secret is set. */
export function deliveryHeaders (event: string, id: string, body: Buffer, secret: string | null): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Lectern-Webhooks',
    'x-webhook-event': event,
    'x-webhook-id': id
  }
  if (secret !== null) {
    headers['x-webhook-secret'] = secret
    headers['x-webhook-signature'] = signature(body, secret)
  }
  return headers
}
