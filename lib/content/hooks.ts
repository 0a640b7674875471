// Extension points of the write pipeline. Other plugins register into them in order; the
// pipeline runs them at the places interface.md gives them:
//
//   check    create rule 9, update rule 6: the reference check (every reference must point at
//            an existing entry in the same locale). Returns one message per problem; any
//            message fails the write with 422, and nothing is stored.
//   prepare  create rule 10 (and update rule 7, before the write): rewrites the data about to
//            be stored, e.g. absolute asset URLs under the public base URL made relative.
//   written  create rules 10–11, update rule 7, delete rules 3–4: after the store has made the
//            change durable: discarding the collection's cached responses, updating the
//            reverse-reference index. Runs before the content event and the answer.
//
// `check` and `prepare` run under the collection's write lock, after the unique check and just
// before the write is handed to the store. `written` hooks run once the write is durable, under
// the entry's lock, so the changes of one entry reach them in order. A hook that throws fails
// the request (after a `written` hook the change is stored all the same) and no event is sent.
import type { CollectionModel } from '../../types/schema.js'
import type { Scope } from '../../types/scope.js'
import type { EntryStatus, StoredEntry } from '../../types/store.js'
import type { Data } from './entry.js'

/** An entry about to be written (create or update), after validation and the unique check. */
export interface PendingWrite {
  operation: 'create' | 'update'
  scope: Scope
  collection: string
  model: CollectionModel
  slug: string
  status: EntryStatus
  /** The data as it will be stored (before later `prepare` hooks). Hooks must not modify it. */
  data: Data
  /** The stored entry an update replaces; null on create. */
  previous: StoredEntry | null
}

/** A change the store has made durable. */
export interface WrittenChange {
  operation: 'create' | 'update' | 'delete'
  scope: Scope
  collection: string
  model: CollectionModel
  slug: string
  /** The entry as stored now; null after a delete. */
  entry: StoredEntry | null
  /** The entry before the change; null after a create. */
  previous: StoredEntry | null
}

export type CheckHook = (write: PendingWrite) => string[] | Promise<string[]>
export type PrepareHook = (write: PendingWrite) => Data | Promise<Data>
export type WrittenHook = (change: WrittenChange) => void | Promise<void>

export interface HookMap {
  check: CheckHook
  prepare: PrepareHook
  written: WrittenHook
}
export type HookName = keyof HookMap

export class WriteHooks {
  readonly check: CheckHook[] = []
  readonly prepare: PrepareHook[] = []
  readonly written: WrittenHook[] = []

  /** Appends a hook to a phase; hooks of one phase run in registration order. */
  add<K extends HookName>(name: K, hook: HookMap[K]): void {
    (this[name] as Array<HookMap[K]>).push(hook)
  }

  async runChecks (write: PendingWrite): Promise<string[]> {
    const messages: string[] = []
    for (const hook of this.check) messages.push(...await hook(write))
    return messages
  }

  async runPrepare (write: PendingWrite): Promise<Data> {
    let data = write.data
    for (const hook of this.prepare) data = await hook({ ...write, data })
    return data
  }

  async runWritten (change: WrittenChange): Promise<void> {
    for (const hook of this.written) await hook(change)
  }
}
