// Every error the API can answer with, in one table. The error handler renders
// these as the contract's envelope: { statusCode, error, code, message, errors? }.

export const ERROR_KINDS = {
  BAD_REQUEST: { statusCode: 400, error: 'Bad Request' },
  UNAUTHORIZED: { statusCode: 401, error: 'Unauthorized' },
  FORBIDDEN: { statusCode: 403, error: 'Forbidden' },
  NOT_FOUND: { statusCode: 404, error: 'Not Found' },
  METHOD_NOT_ALLOWED: { statusCode: 405, error: 'Method Not Allowed' },
  CONFLICT: { statusCode: 409, error: 'Conflict' },
  CURSOR_EXPIRED: { statusCode: 410, error: 'Gone' },
  PRECONDITION_FAILED: { statusCode: 412, error: 'Precondition Failed' },
  PAYLOAD_TOO_LARGE: { statusCode: 413, error: 'Payload Too Large' },
  UNSUPPORTED_MEDIA_TYPE: { statusCode: 415, error: 'Unsupported Media Type' },
  RANGE_NOT_SATISFIABLE: { statusCode: 416, error: 'Range Not Satisfiable' },
  VALIDATION_FAILED: { statusCode: 422, error: 'Unprocessable Entity' },
  TOO_MANY_REQUESTS: { statusCode: 429, error: 'Too Many Requests' },
  INTERNAL: { statusCode: 500, error: 'Internal Server Error' },
  UNAVAILABLE: { statusCode: 503, error: 'Service Unavailable' }
} as const

export type ErrorCode = keyof typeof ERROR_KINDS

export interface ErrorBody {
  statusCode: number
  error: string
  code: ErrorCode
  message: string
  errors?: string[]
}

export class CmsError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number
  readonly errors: string[] | undefined

  constructor (code: ErrorCode, message: string, errors?: string[]) {
    super(message)
    this.name = 'CmsError'
    this.code = code
    this.statusCode = ERROR_KINDS[code].statusCode
    this.errors = errors
  }

  toBody (): ErrorBody {
    const body: ErrorBody = {
      statusCode: this.statusCode,
      error: ERROR_KINDS[this.code].error,
      code: this.code,
      // The text of a 5xx is never shown: it may name files or internals.
      message: this.statusCode >= 500 ? GENERIC_INTERNAL_MESSAGE : this.message
    }
    if (this.errors !== undefined) body.errors = this.errors
    return body
  }
}

export const GENERIC_INTERNAL_MESSAGE = 'An internal error occurred.'

export const badRequest = (message: string): CmsError => new CmsError('BAD_REQUEST', message)
export const unauthorized = (message = 'A valid API key is required.'): CmsError => new CmsError('UNAUTHORIZED', message)
export const forbidden = (message = 'The API key does not grant this permission.'): CmsError => new CmsError('FORBIDDEN', message)
export const notFound = (message = 'Not found.'): CmsError => new CmsError('NOT_FOUND', message)
export const conflict = (message: string): CmsError => new CmsError('CONFLICT', message)
export const payloadTooLarge = (message = 'Request body is too large.'): CmsError => new CmsError('PAYLOAD_TOO_LARGE', message)
export const unsupportedMediaType = (message: string): CmsError => new CmsError('UNSUPPORTED_MEDIA_TYPE', message)
export const validationFailed = (errors: string[], message = 'Validation failed'): CmsError =>
  new CmsError('VALIDATION_FAILED', message, errors)
export const internal = (message = GENERIC_INTERNAL_MESSAGE): CmsError => new CmsError('INTERNAL', message)

/** The error kind for a bare HTTP status (Fastify's own errors carry only a status). */
export function codeForStatus (statusCode: number): ErrorCode {
  for (const [code, kind] of Object.entries(ERROR_KINDS) as Array<[ErrorCode, (typeof ERROR_KINDS)[ErrorCode]]>) {
    if (kind.statusCode === statusCode) return code
  }
  return statusCode >= 500 ? 'INTERNAL' : 'BAD_REQUEST'
}

export function errorBody (statusCode: number, message: string, errors?: string[]): ErrorBody {
  return new CmsError(codeForStatus(statusCode), message, errors).toBody()
}
