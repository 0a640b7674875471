// The parameters of GET /api/sync (contract §9), checked: a start (`initial=true` and the run's
// scope), or a cursor to go on from; 400 naming the parameter for anything else.
import { badRequest } from '../errors.js'
import { closestName } from '../query/names.js'
import { MAX_PER_PAGE } from '../query/parse.js'
import type { Scope } from '../../types/scope.js'

export const DEFAULT_SYNC_PER_PAGE = 100
const SCOPE_PARAMETERS = ['_environment', '_locale']
const START_PARAMETERS = ['initial', 'collections', '_status', '_per_page', ...SCOPE_PARAMETERS]
/** `_` is the cache-busting parameter HTTP clients add: ignored, as on lists. */
const KNOWN = new Set(['cursor', ...START_PARAMETERS, '_'])

export type SyncRequest =
  | { kind: 'initial', scope: Scope, collections: string[] | null, publishedOnly: boolean, perPage: number }
  | { kind: 'cursor', cursor: string, perPage: number }

export interface SyncRequestContext {
  seesDrafts: boolean
  scopeOf: (query: { _locale?: unknown, _environment?: unknown }) => Scope
  /** Whether a name is a current content collection (not unknown, not reusable). */
  isCollection: (name: string) => boolean
}

export function parseSyncRequest (query: Record<string, unknown>, context: SyncRequestContext): SyncRequest {
  for (const key of Object.keys(query)) {
    if (query[key] === undefined || KNOWN.has(key)) continue
    const closest = closestName(key, [...KNOWN].filter(k => k !== '_'))
    throw badRequest(`Unknown parameter '${key}'.${closest === null ? '' : ` Did you mean '${closest}'?`}`)
  }
  const perPage = perPageOf(query._per_page)
  const cursor = query.cursor
  if (cursor !== undefined) {
    if (query.initial !== undefined) throw badRequest('Parameters \'cursor\' and \'initial\' cannot be used together: a cursor goes on from a run, initial=true starts one.')
    const other = START_PARAMETERS.find(key => key !== '_per_page' && query[key] !== undefined)
    if (other !== undefined) throw badRequest(`Parameter '${other}' cannot be used with 'cursor': the cursor carries the run's scope (only '_per_page' may change).`)
    return { kind: 'cursor', cursor: single('cursor', cursor), perPage }
  }
  if (query.initial === undefined) throw badRequest('Either \'initial=true\' (start a sync) or \'cursor\' (go on from one) is required.')
  if (single('initial', query.initial) !== 'true') throw badRequest('Invalid value for \'initial\': expected \'true\'.')
  return {
    kind: 'initial',
    scope: context.scopeOf({ _environment: scopeValue(query, '_environment'), _locale: scopeValue(query, '_locale') }),
    collections: collectionsOf(query.collections, context),
    publishedOnly: publishedOnly(query._status, context.seesDrafts),
    perPage
  }
}

function single (key: string, value: unknown): string {
  if (typeof value === 'string') return value
  throw badRequest(`Parameter '${key}' must be given once.`)
}

function scopeValue (query: Record<string, unknown>, key: string): string | undefined {
  return query[key] === undefined ? undefined : single(key, query[key])
}

function perPageOf (value: unknown): number {
  if (value === undefined) return DEFAULT_SYNC_PER_PAGE
  const text = single('_per_page', value).trim()
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN
  if (!(n >= 1 && n <= MAX_PER_PAGE)) throw badRequest(`Invalid value for '_per_page': expected a whole number from 1 to ${MAX_PER_PAGE}.`)
  return n
}

/** `collections=a,b`: sorted, without repeats; every one a current content collection. */
function collectionsOf (value: unknown, context: SyncRequestContext): string[] | null {
  if (value === undefined) return null
  const names = [...new Set(single('collections', value).split(',').map(s => s.trim()).filter(s => s !== ''))].sort()
  if (names.length === 0) throw badRequest('Invalid value for \'collections\': name at least one collection.')
  const unknown = names.find(name => !context.isCollection(name))
  if (unknown !== undefined) throw badRequest(`Invalid value for 'collections': '${unknown}' is not a content collection (unknown or reusable).`)
  return names
}

/** `_status`: `published` or `all`; `all` by default with a key, and always `published` without one, as for lists. */
function publishedOnly (value: unknown, seesDrafts: boolean): boolean {
  if (value === undefined) return !seesDrafts
  const text = single('_status', value)
  if (text !== 'published' && text !== 'all') throw badRequest('Invalid value for \'_status\': expected \'published\' or \'all\'.')
  return text === 'published' || !seesDrafts
}
