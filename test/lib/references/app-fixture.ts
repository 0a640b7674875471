// The collections and a small client for the references, `_resolve`, referrers and cache tests
// (test/plugins/{references,cache}.test.ts, test/routes/{referrers,resolve,cache}*.test.ts).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { build, tempDir, type BuildOptions, type Env } from '../../helper.js'
import type { SchemaDefinition } from '../../../types/schema.js'

export const PUBLIC_URL = 'https://cms.example.com'

export const SCHEMAS: SchemaDefinition[] = [
  {
    name: 'authors',
    fields: {
      name: { field_type: 'string', required: true },
      avatar: { field_type: 'asset' },
      best: { field_type: 'reference', collection: 'posts' },
      friends: { field_type: 'reference', collection: 'authors', multiple: true },
      homepage: { field_type: 'url' }
    }
  },
  { name: 'tags', fields: { label: { field_type: 'string' } } },
  {
    name: 'posts',
    strict: true,
    fields: {
      title: { field_type: 'string', required: true },
      author: { field_type: 'reference', collection: 'authors' },
      tags: { field_type: 'reference', collection: 'tags', multiple: true },
      seo: { field_type: 'object', fields: { image: { field_type: 'asset' }, by: { field_type: 'reference', collection: 'authors' } } },
      blocks: {
        field_type: 'array',
        items: { field_type: 'object', fields: { text: { field_type: 'text' }, image: { field_type: 'asset' } } }
      },
      // The registry refuses references inside array items: a multiple reference is the list form.
      related: { field_type: 'reference', collection: 'posts', multiple: true },
      cover: { field_type: 'asset' },
      extra: { field_type: 'json' }
    }
  },
  { name: 'base', reusable: true, fields: { note: { field_type: 'text' } } }
]

export function writeSchemas (dataDir: string, schemas: SchemaDefinition[] = SCHEMAS): void {
  const typesDir = path.join(dataDir, 'types')
  mkdirSync(typesDir, { recursive: true })
  for (const schema of schemas) writeFileSync(path.join(typesDir, `${schema.name}.json`), JSON.stringify(schema, null, 2))
}

export type Body = Record<string, unknown>

export interface Client {
  app: FastifyInstance
  dataDir: string
  get: (url: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  post: (collection: string, body: Body, headers?: Record<string, string>, query?: string) => Promise<LightMyRequestResponse>
  put: (path: string, body: Body, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  del: (path: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  /** Creates an entry and asserts the 201. */
  create: (t: Test, collection: string, body: Body, headers?: Record<string, string>, query?: string) => Promise<Body>
}

export function client (app: FastifyInstance, dataDir: string, defaults: Record<string, string> = {}): Client {
  const send = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: Body, headers: Record<string, string> = {}) =>
    await app.inject({ method, url, headers: { ...defaults, ...headers }, ...(body === undefined ? {} : { payload: body }) })
  const c: Client = {
    app,
    dataDir,
    get: async (url, headers) => await send('GET', url, undefined, headers),
    post: async (collection, body, headers, query = '') => await send('POST', `/api/content/${collection}${query}`, body, headers),
    put: async (p, body, headers) => await send('PUT', `/api/content/${p}`, body, headers),
    del: async (p, headers) => await send('DELETE', `/api/content/${p}`, undefined, headers),
    create: async (t, collection, body, headers, query) => {
      const res = await c.post(collection, body, headers, query)
      t.equal(res.statusCode, 201, `created ${collection}/${String(body._slug)}`, { body: res.body })
      return res.json()
    }
  }
  return c
}

/** The app on a data dir holding the test collections (CMS_PUBLIC_URL set); a restart keeps its schema files. */
export async function setup (t: Test, env: Env = {}, options: BuildOptions = {}, defaults: Record<string, string> = {}): Promise<Client> {
  const dataDir = options.dataDir ?? path.join(tempDir(t), 'data')
  if (!existsSync(path.join(dataDir, 'types'))) writeSchemas(dataDir)
  const app = await build(t, { CMS_PUBLIC_URL: PUBLIC_URL, ...env }, { ...options, dataDir })
  return client(app, dataDir, defaults)
}

/** A few authors, tags and posts referencing them. */
export async function seed (t: Test, c: Client, headers?: Record<string, string>): Promise<void> {
  await c.create(t, 'tags', { _slug: 'news', label: 'News' }, headers)
  await c.create(t, 'tags', { _slug: 'tech', label: 'Tech' }, headers)
  await c.create(t, 'authors', { _slug: 'jane', name: 'Jane', avatar: '/api/assets/jane.png' }, headers)
  await c.create(t, 'authors', { _slug: 'joe', name: 'Joe', friends: ['jane'] }, headers)
  await c.create(t, 'posts', {
    _slug: 'hello',
    title: 'Hello',
    author: 'jane',
    tags: ['news', 'tech'],
    seo: { image: '/api/assets/seo.png', by: 'joe' },
    blocks: [{ text: 'quote', image: '/api/assets/block.png' }],
    cover: '/api/assets/cover.png'
  }, headers)
}
