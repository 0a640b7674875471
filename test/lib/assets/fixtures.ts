// Shared by the asset and transform tests: generated images, multipart bodies, repositories per store.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import sharp from 'sharp'
import type { Test } from 'tap'
import { createAssetRepository, type AssetRepository } from '../../../lib/assets/repository.js'
import type { PostgresStore } from '../../../lib/store/postgres.js'
import type { StoreName } from '../../helper.js'
import { storeFactories } from '../../fixtures/stores.js'

export interface FilePart {
  name: string
  data: Uint8Array
  /** What the client claims; never trusted by the server. */
  type?: string
  /** The form field name (default 'file'). */
  field?: string
}

export interface MultipartBody {
  payload: Buffer
  headers: Record<string, string>
}

/**
 * A multipart/form-data body built by the platform's FormData and serialized through `Response`,
 * exactly as a browser or fetch would send it. Fields come first unless `fieldsLast`.
 */
export async function multipart (files: FilePart[], fields: Record<string, string> = {}, fieldsLast = false): Promise<MultipartBody> {
  const form = new FormData()
  const addFields = (): void => { for (const [k, v] of Object.entries(fields)) form.append(k, v) }
  if (!fieldsLast) addFields()
  for (const f of files) {
    form.append(f.field ?? 'file', new Blob([f.data], { type: f.type ?? 'application/octet-stream' }), f.name)
  }
  if (fieldsLast) addFields()
  const res = new Response(form)
  const contentType = res.headers.get('content-type')
  if (contentType === null) throw new Error('no content type')
  return { payload: Buffer.from(await res.arrayBuffer()), headers: { 'content-type': contentType } }
}

/** A PNG with a gradient-free solid fill and a circle, so encoders have something to do. */
export async function png (width: number, height: number): Promise<Buffer> {
  return await sharp({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } })
    .composite([{ input: Buffer.from(`<svg width="${width}" height="${height}"><circle cx="${width / 2}" cy="${height / 2}" r="${Math.min(width, height) / 3}" fill="orange"/></svg>`) }])
    .png().toBuffer()
}

export async function jpeg (width: number, height: number): Promise<Buffer> {
  return await sharp({ create: { width, height, channels: 3, background: { r: 200, g: 60, b: 40 } } }).jpeg({ quality: 80 }).toBuffer()
}

export const SVG = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><rect width="120" height="80" fill="red"/></svg>\n')

/** Upload through inject; returns the response. */
export async function upload (app: FastifyInstance, files: FilePart[], options: { fields?: Record<string, string>, headers?: Record<string, string>, query?: string, fieldsLast?: boolean } = {}): Promise<Awaited<ReturnType<FastifyInstance['inject']>>> {
  const body = await multipart(files, options.fields, options.fieldsLast)
  return await app.inject({
    method: 'POST',
    url: `/api/assets${options.query === undefined ? '' : `?${options.query}`}`,
    payload: body.payload,
    headers: { ...body.headers, ...options.headers }
  })
}

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
}

/**
 * A request whose path goes on the wire exactly as written (inject and fetch normalize `..` and
 * `%2e%2e` away before the router sees them; a real client need not).
 */
export async function rawRequest (app: FastifyInstance, method: string, rawPath: string, options: { headers?: Record<string, string>, body?: string | Buffer } = {}): Promise<RawResponse> {
  if (app.server.address() === null) await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  return await new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: rawPath, headers: options.headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }) })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

/** A closed repository of `kind` on `dataDir`; with postgres, on a store of that data dir's schema (shared, as replicas share it). */
export async function assetRepository (t: Test, kind: StoreName, dataDir: string): Promise<AssetRepository> {
  if (kind !== 'postgres') return createAssetRepository(kind, { dataDir })
  const factory = storeFactories.find(f => f.name === 'postgres')
  if (factory === undefined) throw new Error('postgres is not among LECTERN_TEST_STORES')
  const store = factory.create({ dataDir, environments: [], locales: [] }) as PostgresStore
  await store.open()
  t.teardown(async () => { await store.close() })
  return createAssetRepository(kind, { dataDir, database: store })
}
