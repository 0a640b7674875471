// Events of interface.md "Events" and contract §6. The bus adds nothing; the webhooks
// plugin adds `id` and `timestamp` when it records a delivery.
import type { EntryStatus } from './store.js'

export type SchemaEvent = { event: 'schema.created' | 'schema.updated' | 'schema.deleted', name: string }
export type ContentEvent = {
  event: 'content.created' | 'content.updated' | 'content.deleted'
  collection: string
  slug: string
  locale: string | null
  environment: string
  /** The change's position in the store's change log (contract §9): what a sync item of it carries. */
  seq: number
  /** The entry's `_status` after the change; null on delete. */
  status: EntryStatus | null
  /** The entry's `_status` before the change; null on create. An unpublish: 'published' → 'draft'. */
  previous_status: EntryStatus | null
}
export type AssetEvent = {
  event: 'asset.created' | 'asset.deleted'
  path: string
  environment: string
  size: number
  mime: string
}
export type CmsEvent = SchemaEvent | ContentEvent | AssetEvent
export type EventName = CmsEvent['event']
