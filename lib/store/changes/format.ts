// The file store's change log on disk, `<data>/content/changes.log`: JSON lines. The first line is
// the header, `{"log":"lectern-changes","version":1,"horizon":<seq>}`; each further line is one
// record, `[seq, environment, locale or null, collection, slug, op, status or null, at]`, in
// increasing seq order. Appends add records; a compaction rewrites the file atomically (a new
// header, each key's latest record). Every name in a record is ASCII (names.ts), so a line's
// characters are its bytes. A rewrite pads its header with spaces to a fixed width (JSON allows
// them), so the header can be written last, once the horizon is known, over a placeholder.
import { changeRecord, isChange } from './common.js'
import type { Change, ChangeRecord } from '../../../types/changes.js'

export const CHANGE_LOG_FILE = 'changes.log'
const LOG_NAME = 'lectern-changes'
const FORMAT_VERSION = 1
const NEWLINE = 0x0a

export function headerLine (horizon: number): string {
  return JSON.stringify({ log: LOG_NAME, version: FORMAT_VERSION, horizon }) + '\n'
}

/** The width of a padded header: that of the widest horizon. */
export const PADDED_HEADER_BYTES = headerLine(Number.MAX_SAFE_INTEGER).length

/** A header padded with spaces to PADDED_HEADER_BYTES. */
export function paddedHeaderLine (horizon: number): string {
  const line = headerLine(horizon)
  return line.slice(0, -1).padEnd(PADDED_HEADER_BYTES - 1, ' ') + '\n'
}

export function recordLine (r: ChangeRecord): string {
  return JSON.stringify([r.seq, r.environment, r.locale, r.collection, r.slug, r.op, r.status, r.at]) + '\n'
}

/** A line's JSON value; undefined when it is not JSON (a torn or damaged line). */
function jsonOf (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * A record line's text (without its newline) as a plain, short-lived object: what a rewrite reads
 * of every line without making a record of each; null when it is not a whole, valid one.
 */
export function recordFields (text: string): (Change & { seq: number }) | null {
  const value = jsonOf(text)
  if (!Array.isArray(value) || value.length !== 8) return null
  const [seq, environment, locale, collection, slug, op, status, at] = value as unknown[]
  const fields = { seq, environment, locale, collection, slug, op, status, at }
  return Number.isSafeInteger(seq) && (seq as number) >= 1 && isChange(fields) ? fields as Change & { seq: number } : null
}

/** A record line's text (without its newline) as a record, or null when it is not a whole, valid one. */
export function parseRecordLine (text: string): ChangeRecord | null {
  const fields = recordFields(text)
  return fields === null ? null : changeRecord(fields.seq, fields)
}

export interface ParsedChangeLog {
  horizon: number
  /** The valid records, in file (and seq) order. */
  records: ChangeRecord[]
  /** Where the valid part ends: the length to cut a torn tail back to. */
  validBytes: number
  /**
   * 'tail': the file ends in a partial or invalid piece and nothing valid after it (an append
   * that a crash cut short, never acknowledged). 'middle': a valid record follows invalid bytes,
   * so records that readers may have seen can be lost.
   */
  damage: 'none' | 'tail' | 'middle'
}

/** Reads a change log's bytes. Throws when the header is not a Lectern change log's. */
export function parseChangeLog (bytes: Buffer): ParsedChangeLog {
  const end = bytes.indexOf(NEWLINE)
  const horizon = end < 0 ? null : parseHeader(bytes.toString('utf8', 0, end))
  if (horizon === null) throw new Error(`${CHANGE_LOG_FILE} does not start with a Lectern change log header`)
  const parsed: ParsedChangeLog = { horizon, records: [], validBytes: end + 1, damage: 'none' }
  let start = end + 1
  let last = 0
  while (start < bytes.length) {
    const next = bytes.indexOf(NEWLINE, start)
    const record = next < 0 ? null : parseRecordLine(bytes.toString('utf8', start, next))
    if (record !== null && record.seq > last) {
      parsed.records.push(record)
      last = record.seq
      if (parsed.damage === 'none') parsed.validBytes = next + 1
      else parsed.damage = 'middle'
    } else if (parsed.damage === 'none') {
      parsed.damage = 'tail'
    }
    if (next < 0) break
    start = next + 1
  }
  return parsed
}

/** The horizon a header line gives, or null when it is not a header this version reads. */
function parseHeader (text: string): number | null {
  const header = jsonOf(text) as { log?: unknown, version?: unknown, horizon?: unknown } | null
  if (header === null || typeof header !== 'object' || header.log !== LOG_NAME) return null
  if (header.version !== FORMAT_VERSION) {
    throw new Error(`${CHANGE_LOG_FILE} has format version ${String(header.version)}; this server understands ${FORMAT_VERSION}`)
  }
  const horizon = header.horizon
  return Number.isSafeInteger(horizon) && (horizon as number) >= 0 ? horizon as number : null
}
