// The shapes the admin reads from the HTTP API (interface.md and contract.md). The schema
// model is the server's own (type-only import: nothing of the server reaches the bundle).
import type { FieldDefinition, FieldType, ResolvedSchema, SchemaDefinition } from '../../types/schema.js'

export type { FieldDefinition, FieldType, ResolvedSchema, SchemaDefinition }

/** Contract §5, in the order the schema editor offers them. */
export const FIELD_TYPES: readonly FieldType[] = [
  'string', 'text', 'markdown', 'richtext', 'number', 'integer', 'boolean', 'date', 'datetime',
  'email', 'url', 'slug', 'color', 'select', 'multiselect', 'reference', 'asset', 'object', 'array', 'json'
]

export type Role = 'admin' | 'editor' | 'viewer'
export type EntryStatus = 'draft' | 'published'

export interface Entry {
  _slug: string
  _status: EntryStatus
  _created_at: string
  _updated_at: string
  [field: string]: unknown
}

export interface ListEnvelope<T> {
  items: T[]
  total: number
  page: number
  per_page: number
  pages: number
  /** The keyset cursor of the next page (contract §10); null on the last. */
  next?: string | null
}

export interface CollectionSummary {
  name: string
  field_count: number
  extends: string | string[] | null
  strict: boolean
  description: string | null
  tags: string[]
  category: string | null
  label: string
}

export interface SlugCheckResult {
  valid: boolean
  normalized: string
  available: boolean
  error: string | null
}

export interface Referrer {
  collection: string
  slug: string
  field: string
  locale: string | null
  /** The referring entry's display field; null without one (or a draft hidden from the caller). */
  title: string | null
}

export interface Environments {
  environments: string[]
  default: string
}

export interface Locales {
  locales: string[]
  default: string | null
}

export interface Asset {
  path: string
  url: string
  name: string
  folder: string
  size: number
  mime: string
  width: number | null
  height: number | null
  created_at: string
}

/** One kept version of an entry (contract §13); the API records no author. */
export interface VersionSummary {
  version: number
  status: EntryStatus
  created_at: string
}

/** A scheduled publish or unpublish (contract §13). */
export interface Schedule {
  id: string
  action: 'publish' | 'unpublish'
  at: string
  collection: string
  slug: string
  locale: string | null
  environment: string
  status: 'pending' | 'failed'
  created_at: string
  error: string | null
}
