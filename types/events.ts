// Events of interface.md "Events" and contract §6. The bus adds nothing; the webhooks
// plugin adds `id` and `timestamp` when it records a delivery.
export type SchemaEvent = { event: 'schema.created' | 'schema.updated' | 'schema.deleted', name: string }
export type ContentEvent = {
  event: 'content.created' | 'content.updated' | 'content.deleted'
  collection: string
  slug: string
  locale: string | null
  environment: string
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
