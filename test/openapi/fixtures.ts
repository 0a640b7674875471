// Collections the OpenAPI and CLI tests share: a strict one with every kind of field the
// per-collection generator distinguishes (required, select, multiselect, references, nested objects).
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { build, tempDir, type Env } from '../helper.js'
import type { OpenApiDocument } from '../../lib/openapi/document.js'

export const SCHEMAS = {
  person: { name: 'person', strict: true, fields: { name: { field_type: 'string', required: true, max_length: 80 } } },
  article: {
    name: 'article',
    strict: true,
    default_sort: 'title',
    fields: {
      title: { field_type: 'string', required: true, max_length: 200 },
      kind: { field_type: 'select', required: true, options: ['news', 'essay'] },
      tags: { field_type: 'multiselect', options: ['a', 'b', 'c'] },
      views: { field_type: 'integer', min: 0 },
      rating: { field_type: 'number' },
      published: { field_type: 'boolean', default: false },
      author: { field_type: 'reference', collection: 'person' },
      reviewers: { field_type: 'reference', collection: 'person', multiple: true },
      when: { field_type: 'datetime' },
      day: { field_type: 'date' },
      color: { field_type: 'color' },
      cover: { field_type: 'asset' },
      meta: { field_type: 'object', fields: { summary: { field_type: 'text', required: true }, words: { field_type: 'integer' } } },
      links: { field_type: 'array', items: { field_type: 'url' } },
      extra: { field_type: 'json' },
      code: { field_type: 'string', readonly: true },
      id: { field_type: 'string', auto: 'uuid' }
    }
  }
} as const

/** Writes the schema files into `<dataDir>/types`; returns the data dir. */
export function dataDirWithSchemas (t: Test, schemas: Record<string, unknown> = SCHEMAS): string {
  const dataDir = path.join(tempDir(t), 'data')
  const types = path.join(dataDir, 'types')
  mkdirSync(types, { recursive: true })
  for (const [name, schema] of Object.entries(schemas)) writeFileSync(path.join(types, `${name}.json`), JSON.stringify(schema, null, 2))
  return dataDir
}

/** An app on a data dir holding the test collections. */
export async function appWithSchemas (t: Test, env: Env = {}): Promise<FastifyInstance> {
  return await build(t, env, { dataDir: dataDirWithSchemas(t) })
}

export async function documentOf (app: FastifyInstance): Promise<OpenApiDocument> {
  return (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json()
}
