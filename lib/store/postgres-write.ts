// A PostgreSQL write as one statement (lib/store/postgres.ts runs it in the write's savepoint):
// the unique lookups, the row and its change record (changes/postgres.ts `recordCtes`) are CTEs
// of one statement, and its one result row says what the rules decided. A refused write writes
// nothing: the row's CTE is gated on the lookups finding no holder, a create whose slug is taken
// inserts nothing (ON CONFLICT DO NOTHING: no error, so the statements sent after it in the same
// pipeline still run), and the record's CTEs run only when the row's did. So the store can send
// every write of a batch at once and read the decisions afterwards.
//
// An update built from what its caller read (EntryInput.expected) is gated on that too: `found`
// says whether the stored row (and the pending draft a publish read) is still exactly that
// (`fresh`), and the row is written only when it is, so a write another process committed since
// the read refuses this one (EntryChanged) instead of being overwritten. Part of the one
// statement: no extra round trip.
//
// Code that must run after the row is written, in the same savepoint (a version kept, a draft
// cleared), goes in as one more CTE of `writeStatement`, reading `row` (empty when the write did
// not happen), as the record does.
import { postgresDialect } from '../query/postgres-dialect.js'
import { sqlBuilder, type Params } from '../query/sql.js'
import { isCollectionName } from './names.js'
import {
  checkUniqueHolders, entryChanged, entryMissing, lookupKind, slugTaken, type Applied, type DeleteOperation, type ExpectedText, type WriteOperation
} from './common.js'
import { removalCtes, versionCtes } from './postgres-editorial.js'
import type { Change } from '../../types/changes.js'
import type { FieldRef } from '../../types/query.js'

const sql = sqlBuilder(postgresDialect)

/** A create or update as queued, with its data's JSONB text (postgres-dialect.ts `jsonbText`). */
export interface PgWriteOperation extends WriteOperation {
  jsonb: string
  /** EntryInput.keepVersions (0: none) and clearDraft: done by the write's statement (postgres-editorial.ts `versionCtes`). */
  keepVersions: number
  clearDraft: boolean
  /** An update's precondition (EntryInput.expected) as text (common.ts `expectedText`); null: none. */
  expected: ExpectedText | null
}

export type PgOperation = PgWriteOperation | DeleteOperation

/** Writes a change's CTEs (changes/postgres.ts `recordCtes`). */
export type RecordCtes = (gate: string, change: Change, params: Params) => string

/** The result row of a write statement. */
export interface WriteRow {
  /** update: the row's created_at before the statement (null: no such entry). */
  found?: string | null
  /** update with a precondition: whether the row (and draft) were still as expected (null: no such entry). */
  fresh?: boolean | null
  /** create, update: the written row's created_at (null: not written). */
  written?: string | null
  /** The change's seq (null: nothing written). */
  seq: string | null
  /** Each unique value's holder (h0, h1…: another entry's slug, or null). */
  [holder: `h${number}`]: string | null
}

const KEY_SQL = 'environment = ? AND collection = ? AND locale = ? AND slug = ?'

function keyParams (op: PgOperation): unknown[] {
  return [op.scope.environment, op.collection, op.locale, op.slug]
}

/**
 * The slug of another row of the bucket holding `value` at `dottedPath`, as a scalar subquery:
 * through the unique field's expression index (the key as the builder writes it), null when none.
 */
export function holderSql (bucket: { environment: string, collection: string, locale: string }, dottedPath: string, value: string | number | boolean, excludeSlug: string | null, params: Params): string {
  // The collection is written as a literal, as the index's own WHERE has it, so that a prepared
  // statement's generic plan can use the partial index too (a bound value could be any
  // collection). It is a checked name (names.ts: lower-case letters, digits and `_`), as the SQLite
  // store writes it into its statements.
  if (!isCollectionName(bucket.collection)) throw new Error(`not a collection name: ${bucket.collection}`)
  const field: FieldRef = { name: dottedPath, path: dottedPath.split('.'), system: false, kind: lookupKind(value), array: false }
  params.push(bucket.environment, bucket.locale)
  const key = sql.keySql(field, params)
  params.push(sql.bindKey(field, value), excludeSlug ?? '')
  return `(SELECT slug FROM entries WHERE environment = ? AND collection = '${bucket.collection}' AND locale = ? AND ${key} = ? AND slug <> ? LIMIT 1)`
}

/** The CTE `held` (one row: each unique value's holder, h0, h1…) and the gate that lets the row be written only when none is held. */
function heldCte (op: PgWriteOperation, params: Params): { cte: string, gate: string } | null {
  if (op.unique.length === 0) return null
  const bucket = { environment: op.scope.environment, collection: op.collection, locale: op.locale }
  const columns = op.unique.map(([path, value], i) => `${holderSql(bucket, path, value, op.slug, params)} AS h${i}`)
  const taken = op.unique.map((_, i) => `h${i} IS NOT NULL`).join(' OR ')
  return { cte: `held AS (SELECT ${columns.join(', ')})`, gate: ` AND NOT EXISTS (SELECT 1 FROM held WHERE ${taken})` }
}

/**
 * Whether the entry's row (the one `found` reads) is still as the update's caller read it: its
 * status, updated_at and `doc` text (see common.ts ExpectedText), and with a draft read, the
 * draft's updated_at and `doc` text.
 */
function freshSql (op: PgWriteOperation, expected: ExpectedText, params: Params): string {
  params.push(expected.status, expected.updatedAt, expected.json)
  let draft = ''
  if (expected.draft !== null) {
    params.push(...keyParams(op), expected.draft.updatedAt, expected.draft.json)
    draft = ` AND EXISTS (SELECT 1 FROM entry_drafts WHERE ${KEY_SQL} AND updated_at = ? AND doc = ?)`
  }
  return `(status = ? AND updated_at = ? AND doc = ?${draft})`
}

/** The row's CTE `row` of a write, returning created_at (nothing when the write did not happen). */
function rowCte (op: PgOperation, gate: string, params: Params): string {
  switch (op.kind) {
    case 'create':
      params.push(...keyParams(op), op.status, op.at, op.at, op.json, op.jsonb, op.search)
      return `row AS (INSERT INTO entries (environment, collection, locale, slug, status, created_at, updated_at, doc, data, search)
        SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ? WHERE TRUE${gate}
        ON CONFLICT (environment, collection, locale, slug) DO NOTHING RETURNING created_at)`
    case 'update':
      params.push(op.status, op.at, op.json, op.jsonb, op.search, ...keyParams(op))
      return `row AS (UPDATE entries SET status = ?, updated_at = ?, doc = ?, data = ?::jsonb, search = ?
        WHERE ${KEY_SQL}${gate} RETURNING created_at)`
    case 'delete':
      params.push(...keyParams(op))
      return `row AS (DELETE FROM entries WHERE ${KEY_SQL} RETURNING created_at)`
  }
}

/** The change a write records: an upsert with its status and time, or a tombstone. */
function changeOf (op: PgOperation): Change {
  const key = { environment: op.scope.environment, locale: op.scope.locale, collection: op.collection, slug: op.slug }
  return op.kind === 'delete'
    ? { ...key, op: 'delete', status: null, at: op.at }
    : { ...key, op: 'upsert', status: op.status, at: op.at }
}

/**
 * A write's one statement (`?` placeholders; postgres-dialect.ts `numbered` numbers them) and
 * its values. In order of the rules: an update reads whether its entry exists (`found`), a
 * create or update its unique values' holders (`held`), then the row, then its record.
 */
export function writeStatement (op: PgOperation, recordCtes: RecordCtes): { text: string, values: Params } {
  const params: Params = []
  const ctes: string[] = []
  const outputs = ['(SELECT seq FROM rec) AS seq']
  let gate = ''
  if (op.kind === 'update') {
    const fresh = op.expected === null ? '' : `, ${freshSql(op, op.expected, params)} AS fresh`
    params.push(...keyParams(op))
    ctes.push(`found AS (SELECT created_at${fresh} FROM entries WHERE ${KEY_SQL})`)
    outputs.push('(SELECT created_at FROM found) AS found')
    if (op.expected !== null) {
      outputs.push('(SELECT fresh FROM found) AS fresh')
      gate = ' AND (SELECT fresh FROM found)'
    }
  }
  const held = op.kind === 'delete' ? null : heldCte(op, params)
  if (held !== null) ctes.push(held.cte)
  ctes.push(rowCte(op, gate + (held?.gate ?? ''), params))
  if (op.kind !== 'delete') outputs.push('(SELECT created_at FROM row) AS written')
  ctes.push(recordCtes('row', changeOf(op), params))
  const editorial = op.kind === 'delete'
    ? removalCtes('row', keyParams(op), params)
    : versionCtes('row', keyParams(op), op.keepVersions > 0 ? { keep: op.keepVersions, status: op.status, doc: op.json, at: op.at } : null, op.clearDraft, params)
  if (editorial !== null) ctes.push(editorial)
  const text = `WITH ${ctes.join(',\n')}\nSELECT ${outputs.join(', ')}${held === null ? '' : ', held.* FROM held'}`
  return { text, values: params }
}

/**
 * What the rules decided, from the statement's row: throws the refusal (a missing entry, then a
 * changed one, before a clash for an update, a clash before a taken slug for a create), else what the write did.
 */
export function decideWrite (op: PgOperation, row: WriteRow): Applied {
  const seq = row.seq === null ? null : Number(row.seq)
  if (op.kind === 'delete') return { seq }
  if (op.kind === 'update' && (row.found ?? null) === null) throw entryMissing(op.slug, op.collection)
  if (op.kind === 'update' && op.expected !== null && row.fresh !== true) throw entryChanged(op.slug, op.collection)
  checkUniqueHolders(op.unique.map(([path], i) => [path, row[`h${i}`] ?? null] as const))
  // Not written, with its entry found (an update) and no value held: a create's slug is taken.
  if (row.written === null || row.written === undefined || seq === null) throw slugTaken(op.slug, op.collection)
  return op.kind === 'update' ? { createdAt: row.written, seq } : { seq }
}
