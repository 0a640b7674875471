// The reference check of the write pipeline (interface.md create rule 9, update rule 6): every
// reference must name an existing entry of its target collection in the same locale and
// environment. One batched read per target collection, whatever the number of references, all
// of them at once.
import type { Scope } from '../../types/scope.js'
import type { StoredEntry } from '../../types/store.js'
import { findReferences, type Data, type FoundReference, type ReferencePlan } from './plan.js'

/** What the check reads: whether a collection exists, and entries by slug in batches. */
export interface ReferenceTargets {
  /** True for a content collection (not unknown, not reusable). */
  hasCollection: (collection: string) => boolean
  getMany: (scope: Scope, collection: string, slugs: readonly string[]) => Promise<Map<string, StoredEntry>>
}

/**
 * One message per reference whose target is missing, `"<field path>: ..."` naming the slug
 * (contract §2: each message starts with the field path). Empty when every target exists.
 */
export async function checkReferences (plan: ReferencePlan, data: Data, scope: Scope, targets: ReferenceTargets): Promise<string[]> {
  const found = findReferences(plan, data)
  if (found.length === 0) return []
  const byCollection = new Map<string, FoundReference[]>()
  for (const ref of found) {
    const list = byCollection.get(ref.node.collection)
    if (list === undefined) byCollection.set(ref.node.collection, [ref])
    else list.push(ref)
  }
  const missing = new Set<FoundReference>()
  await Promise.all([...byCollection].map(async ([collection, refs]) => {
    const existing = targets.hasCollection(collection)
      ? await targets.getMany(scope, collection, [...new Set(refs.map(r => r.slug))])
      : null
    for (const ref of refs) if (existing?.has(ref.slug) !== true) missing.add(ref)
  }))
  const messages: string[] = []
  // In document order, each (place, slug) once.
  for (const ref of found) {
    if (!missing.has(ref)) continue
    const known = targets.hasCollection(ref.node.collection)
    const message = known
      ? `${ref.path}: no '${ref.node.collection}' entry with the slug '${ref.slug}'`
      : `${ref.path}: no '${ref.node.collection}' entry with the slug '${ref.slug}' (no collection '${ref.node.collection}')`
    if (!messages.includes(message)) messages.push(message)
  }
  return messages
}
