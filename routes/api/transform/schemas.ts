import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../types/errors.js'
import { MAX_DIMENSION } from '../../../lib/assets/transforms.js'
import { Binary } from '../assets/schemas.js'

export const TransformParams = Type.Object({
  '*': Type.String({ description: 'The asset path, as in /api/assets/<path>' })
})

export const TransformQuery = Type.Object({
  w: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DIMENSION, description: 'Width in pixels (never larger than the source)' })),
  h: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DIMENSION, description: 'Height in pixels (never larger than the source)' })),
  fit: Type.Optional(Type.Union([
    Type.Literal('cover'), Type.Literal('contain'), Type.Literal('fill'), Type.Literal('inside'), Type.Literal('outside')
  ], { description: 'How the image fits both w and h (default cover)' })),
  format: Type.Optional(Type.Union([
    Type.Literal('webp'), Type.Literal('avif'), Type.Literal('jpeg'), Type.Literal('png'), Type.Literal('auto')
  ], { description: "Output format; auto: AVIF or WebP per Accept, else the source's format" })),
  q: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Quality (WebP, AVIF, JPEG)' })),
  _environment: Type.Optional(Type.String({ description: 'Environment name; missing or unknown selects the first configured environment' }))
})

export const transformSchema = {
  tags: ['assets'],
  summary: 'Transform an image',
  description: 'A resized and/or re-encoded variant, computed once and cached on disk. format=auto picks AVIF, then WebP, ' +
    "from Accept, else the source's format. Cached for a year (immutable); 304 on If-None-Match.",
  params: TransformParams,
  querystring: TransformQuery,
  response: {
    200: Binary('The image variant'),
    304: Type.Null({ description: 'Not modified' }),
    ...errorResponses(400, 404, 415, 503)
  }
}
