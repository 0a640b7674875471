import { Type, type Static } from '@sinclair/typebox'

/** The error envelope of contract §2; every route lists it for its error statuses. */
export const ErrorReply = Type.Object({
  statusCode: Type.Integer(),
  error: Type.String(),
  code: Type.String(),
  message: Type.String(),
  errors: Type.Optional(Type.Array(Type.String()))
}, { $id: 'ErrorReply', description: 'The error envelope (contract §2)' })
export type ErrorReply = Static<typeof ErrorReply>

/** A reference to the shared error schema, for a route's `response` map. */
export const ErrorRef = Type.Ref('ErrorReply')

/** Error statuses as a `response` map fragment: errorResponses(400, 404). */
export function errorResponses (...statuses: number[]): Record<number, typeof ErrorRef> {
  const out: Record<number, typeof ErrorRef> = {}
  for (const s of statuses) out[s] = ErrorRef
  return out
}
