// The file store's schedules (types/editorial.ts, contract §13): one JSON file for the store,
// `<data>/content/schedules.json`, { "schedules": [...] }, each record with its claim (owner and
// lease end), rewritten whole, atomically and durably (temp, fsync, rename, folder fsync) by every
// change before it resolves. Schedule ids are data only: they never name a file.
//
// The store is one process (the data dir's lock), so the records live in memory and the file is
// their durable copy: claims are decided in memory, and kept in the file so a lease still holds
// after a restart. Rewrites are coalesced: a change joins a rewrite that has not started yet.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic } from '../durable.js'
import { isCollectionName, isScopeName, isSlug } from './names.js'
import type { ScheduleFilter, ScheduleInput, SchedulePage, ScheduleRecord, ScheduleStatus } from '../../types/editorial.js'

export const SCHEDULES_FILE = 'schedules.json'

/** A schedule as kept: the record and its claim. */
interface Kept {
  record: ScheduleRecord
  owner: string | null
  /** When the claim ends (ms since the epoch). */
  leaseUntil: number | null
}

interface ScheduleLine {
  id: string
  environment: string
  locale: string | null
  collection: string
  slug: string
  action: 'publish' | 'unpublish'
  at: string
  created_at: string
  status: ScheduleStatus
  error: string | null
  owner: string | null
  lease_until: string | null
}

const byTime = (a: ScheduleRecord, b: ScheduleRecord): number =>
  a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

const copy = (record: ScheduleRecord): ScheduleRecord => ({ ...record, scope: { ...record.scope } })

/** Whether the record has each value the filter gives (types/editorial.ts ScheduleFilter). */
function matches (record: ScheduleRecord, filter: ScheduleFilter): boolean {
  return (filter.environment === undefined || record.scope.environment === filter.environment) &&
    (filter.locale === undefined || record.scope.locale === filter.locale) &&
    (filter.collection === undefined || record.collection === filter.collection) &&
    (filter.slug === undefined || record.slug === filter.slug)
}

/** The key of an entry's schedules. */
export function scheduleKeyText (environment: string, locale: string | null, collection: string, slug: string): string {
  return `${environment}\u0000${collection}\u0000${locale ?? ''}\u0000${slug}`
}

function isLine (value: unknown): value is ScheduleLine {
  if (value === null || typeof value !== 'object') return false
  const s = value as Record<string, unknown>
  return typeof s.id === 'string' && s.id !== '' && isScopeName(s.environment) && (s.locale === null || isScopeName(s.locale)) &&
    isCollectionName(s.collection) && isSlug(s.slug) && (s.action === 'publish' || s.action === 'unpublish') &&
    typeof s.at === 'string' && typeof s.created_at === 'string' && (s.status === 'pending' || s.status === 'failed') &&
    (s.error === null || typeof s.error === 'string') && (s.owner === null || typeof s.owner === 'string') &&
    (s.lease_until === null || typeof s.lease_until === 'string')
}

/** The lines of a schedules file (those it cannot read are left out); [] when there is none. */
export async function readScheduleLines (file: string): Promise<ScheduleLine[]> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return []
    throw err
  }
  const value = JSON.parse(text) as { schedules?: unknown }
  return Array.isArray(value.schedules) ? value.schedules.filter(isLine) : []
}

export async function writeScheduleLines (file: string, lines: readonly ScheduleLine[]): Promise<void> {
  await writeFileAtomic(file, JSON.stringify({ schedules: lines }, null, 2) + '\n')
}

function toKept (line: ScheduleLine): Kept {
  const { id, environment, locale, collection, slug, action, at, status, error } = line
  return {
    record: { id, scope: { environment, locale }, collection, slug, action, at, createdAt: line.created_at, status, error },
    owner: line.owner,
    leaseUntil: line.lease_until === null ? null : Date.parse(line.lease_until)
  }
}

function toLine (kept: Kept): ScheduleLine {
  const { id, scope, collection, slug, action, at, createdAt, status, error } = kept.record
  return {
    id,
    environment: scope.environment,
    locale: scope.locale,
    collection,
    slug,
    action,
    at,
    created_at: createdAt,
    status,
    error,
    owner: kept.owner,
    lease_until: kept.leaseUntil === null ? null : new Date(kept.leaseUntil).toISOString()
  }
}

/** Every schedule of a store, in memory, saved whole to its file. */
export class FileSchedules {
  readonly file: string
  private readonly kept = new Map<string, Kept>()
  private running: Promise<void> | null = null
  private next: Promise<void> | null = null

  constructor (contentDir: string) {
    this.file = path.join(contentDir, SCHEDULES_FILE)
  }

  /** Reads the file, keeping the schedules whose entry `exists`; saves it when some were dropped (their entry's delete was cut short). */
  async load (exists: (record: ScheduleRecord) => boolean): Promise<number> {
    this.kept.clear()
    let dropped = 0
    for (const line of await readScheduleLines(this.file)) {
      const kept = toKept(line)
      if (exists(kept.record)) this.kept.set(kept.record.id, kept)
      else dropped++
    }
    if (dropped > 0) await this.save()
    return dropped
  }

  async add (input: ScheduleInput, now: string): Promise<ScheduleRecord> {
    if (typeof input.id !== 'string' || input.id === '' || this.kept.has(input.id)) throw new RangeError('a schedule id must be new and not empty')
    const { id, scope, collection, slug, action, at } = input
    const record: ScheduleRecord = { id, scope: { environment: scope.environment, locale: scope.locale }, collection, slug, action, at, createdAt: now, status: 'pending', error: null }
    this.kept.set(id, { record, owner: null, leaseUntil: null })
    await this.save()
    return copy(record)
  }

  get (id: string): ScheduleRecord | undefined {
    const kept = this.kept.get(id)
    return kept === undefined ? undefined : copy(kept.record)
  }

  list (status: ScheduleStatus, filter: ScheduleFilter, offset: number, limit: number): SchedulePage {
    const matching = [...this.kept.values()].map(k => k.record)
      .filter(r => r.status === status && matches(r, filter))
      .sort(byTime)
    return { items: matching.slice(offset, offset + limit).map(copy), total: matching.length }
  }

  async delete (id: string): Promise<boolean> {
    if (!this.kept.delete(id)) return false
    await this.save()
    return true
  }

  /** Removes an entry's schedules (its delete), saving when there were some. */
  async deleteOf (keyText: string): Promise<void> {
    let removed = false
    for (const [id, kept] of this.kept) {
      const r = kept.record
      if (scheduleKeyText(r.scope.environment, r.scope.locale, r.collection, r.slug) === keyText) removed = this.kept.delete(id)
    }
    if (removed) await this.save()
  }

  async claim (owner: string, now: string, leaseMs: number, limit: number): Promise<ScheduleRecord[]> {
    const nowMs = Date.parse(now)
    const due = [...this.kept.values()]
      .filter(k => k.record.status === 'pending' && Date.parse(k.record.at) <= nowMs && (k.leaseUntil === null || k.leaseUntil <= nowMs))
      .sort((a, b) => byTime(a.record, b.record))
      .slice(0, Math.max(0, limit))
    if (due.length === 0) return []
    for (const kept of due) {
      kept.owner = owner
      kept.leaseUntil = nowMs + leaseMs
    }
    await this.save()
    return due.map(k => copy(k.record))
  }

  async finish (id: string, owner: string, error: string | null): Promise<boolean> {
    const kept = this.kept.get(id)
    if (kept === undefined || kept.record.status !== 'pending' || kept.owner !== owner) return false
    if (error === null) {
      this.kept.delete(id)
    } else {
      kept.record = { ...kept.record, status: 'failed', error }
      kept.owner = null
      kept.leaseUntil = null
    }
    await this.save()
    return true
  }

  nextAt (): string | null {
    let soonest: string | null = null
    for (const { record } of this.kept.values()) {
      if (record.status === 'pending' && (soonest === null || record.at < soonest)) soonest = record.at
    }
    return soonest
  }

  /** Writes the records as they are now, durably: joins a rewrite not yet started, or queues one after the running one. */
  private save (): Promise<void> {
    if (this.next !== null) return this.next
    const start = (): Promise<void> => {
      this.next = null
      const run = writeScheduleLines(this.file, [...this.kept.values()].map(toLine))
      this.running = run
      const clear = (): void => { if (this.running === run) this.running = null }
      run.then(clear, clear)
      return run
    }
    if (this.running === null) return start()
    this.next = this.running.then(start, start)
    return this.next
  }
}
