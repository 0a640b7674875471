// PLACEHOLDER until the query engine lands: signature only.
import type { ListQuery } from '../../types/query.js'
import type { ResolvedSchema } from '../../types/schema.js'

export interface ParseOptions {
  /** The caller sees drafts (authenticated); otherwise `_status` is forced to `published`. */
  seesDrafts: boolean
}

/** Parses a list request's query string; throws a BAD_REQUEST CmsError naming the bad parameter. */
export function parseListQuery (_raw: Record<string, unknown>, _schema: ResolvedSchema, _options: ParseOptions): ListQuery {
  throw new Error('not implemented')
}
