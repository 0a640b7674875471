// Deriving the reverse-reference index from stored entries: one entry's outgoing references
// (for the write hooks), and the whole index (a rebuild at start).
import type { StoredLocation } from '../../types/store.js'
import { findReferences, type Data, type ReferencePlan } from './plan.js'
import { ReverseIndex, type OutgoingReference } from './reverse-index.js'

/** What `data` references, one record per (field, target). */
export function outgoingReferences (plan: ReferencePlan, data: Data): OutgoingReference[] {
  return findReferences(plan, data).map(ref => ({ field: ref.node.field, collection: ref.node.collection, slug: ref.slug }))
}

/**
 * The index of every stored entry of `environment` (the index is only kept without
 * environments, where everything lives in the default one). References to entries that do not
 * exist are kept but do not count, as after a delete.
 */
export async function buildIndex (
  entries: AsyncIterable<StoredLocation>, planOf: (collection: string) => ReferencePlan | null, environment: string
): Promise<ReverseIndex> {
  const index = new ReverseIndex()
  const existing = new Set<string>()
  const key = (collection: string, slug: string, locale: string | null): string => `${collection}\u0000${slug}\u0000${locale ?? ''}`
  for await (const { scope, collection, entry } of entries) {
    if (scope.environment !== environment) continue
    existing.add(key(collection, entry.slug, scope.locale))
    const plan = planOf(collection)
    if (plan === null || plan.refs.length === 0) continue
    index.set({ collection, slug: entry.slug, locale: scope.locale }, outgoingReferences(plan, entry.data))
  }
  for (const target of [...index.targets()]) {
    if (!existing.has(key(target.collection, target.slug, target.locale))) index.removeReferenced(target)
  }
  return index
}
