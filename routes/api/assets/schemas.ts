import { Type, type Static } from '@sinclair/typebox'
import { ListEnvelope, pagingParameters } from '../../../types/content.js'
import { errorResponses } from '../../../types/errors.js'

const Environment = Type.Optional(Type.String({ description: 'Environment name; missing or unknown selects the first configured environment' }))

/** The asset record of contract §7. */
export const Asset = Type.Object({
  path: Type.String({ pattern: '^/api/assets/', description: 'Relative path, as stored in entries: /api/assets/<folder/>name' }),
  url: Type.String({ format: 'uri', description: 'Absolute URL (the public base URL + path; + ?_environment= for a non-default environment)' }),
  name: Type.String({ description: 'File name, normalized like a slug, keeping the extension' }),
  folder: Type.String({ description: "Folder path ('' for the root)" }),
  size: Type.Integer({ minimum: 0, description: 'Bytes' }),
  mime: Type.String({ description: 'MIME type detected from the content' }),
  width: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'Pixels, for images; else null' }),
  height: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'Pixels, for images; else null' }),
  created_at: Type.String({ format: 'date-time' })
}, { additionalProperties: false })
export type Asset = Static<typeof Asset>

export const UploadReply = Type.Object({ items: Type.Array(Asset) }, { additionalProperties: false })

export const AssetList = ListEnvelope(Asset)

export const EnvironmentQuery = Type.Object({ _environment: Environment })

export const AssetListQuery = Type.Object({
  folder: Type.Optional(Type.String({ maxLength: 500, description: "Only this folder ('' for the root; subfolders not included)" })),
  mime: Type.Optional(Type.String({ maxLength: 255, description: 'MIME type prefix, e.g. image/' })),
  _q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive search in the name' })),
  ...pagingParameters,
  _environment: Environment
})

export const AssetPathParams = Type.Object({
  '*': Type.String({ description: 'The asset path: <folder/>name' })
})

/** A file body (a stream at run time): any content type, described as binary in the OpenAPI document. */
export const Binary = (description: string): ReturnType<typeof Type.Unsafe<unknown>> =>
  Type.Unsafe<unknown>({ description, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } })

export const uploadSchema = {
  tags: ['assets'],
  summary: 'Upload files',
  description: "multipart/form-data with one or more 'file' parts and an optional 'folder' field. " +
    'The MIME type is detected from the content; names are normalized like slugs (a taken name gets -1, -2, ...). Needs AssetsWrite.',
  consumes: ['multipart/form-data'],
  // Documentation only (lib/openapi/routes.ts): the route parses the parts itself.
  multipartBody: Type.Object({
    // One part or several parts of the same name (a form reads the latter as a list).
    file: Type.Union([Type.String({ format: 'binary' }), Type.Array(Type.String({ format: 'binary' }), { minItems: 1, maxItems: 100 })], { description: "One or more 'file' parts" }),
    folder: Type.Optional(Type.String({ maxLength: 2048, description: "Folder path ('' or absent for the root)" }))
  }, { required: ['file'] }),
  querystring: EnvironmentQuery,
  response: { 201: UploadReply, ...errorResponses(400, 401, 403, 409, 413, 415) }
}

export const listSchema = {
  tags: ['assets'],
  summary: 'List assets',
  description: 'Newest first (equal times: the later upload first), from the metadata (never a disk scan). ' +
    '`_after=<next>` gives the page after an answer (contract §10): a walk meets every asset there throughout exactly once, whatever is uploaded or deleted meanwhile.',
  querystring: AssetListQuery,
  response: { 200: AssetList, ...errorResponses(400) }
}

export const serveSchema = {
  tags: ['assets'],
  summary: 'Download an asset',
  description: 'The file with its detected MIME type, ETag, Last-Modified and range support (206).',
  params: AssetPathParams,
  querystring: EnvironmentQuery,
  response: {
    200: Binary('The file'),
    206: Binary('The requested range'),
    304: Type.Null({ description: 'Not modified' }),
    ...errorResponses(400, 404, 412, 416)
  }
}

export const deleteSchema = {
  tags: ['assets'],
  summary: 'Delete an asset',
  description: 'Removes the file, its metadata and its transform variants. Needs AssetsWrite.',
  params: AssetPathParams,
  querystring: EnvironmentQuery,
  response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 403, 404) }
}
