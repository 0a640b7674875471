// The "did you mean" of a query name that fails (contract §4): the known name closest to a
// typo, by edit distance, so `per_page` suggests `_per_page` and `titel` suggests `title`.

/**
 * The optimal string alignment distance: insertions, deletions, substitutions and swaps of two
 * neighbours (`titel` → `title` is one edit), each costing 1.
 */
export function editDistance (a: string, b: string): number {
  const rows: number[][] = []
  for (let i = 0; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1).fill(0)
    row[0] = i
    rows.push(row)
  }
  const first = rows[0] as number[]
  for (let j = 0; j <= b.length; j++) first[j] = j
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[]
    const above = rows[i - 1] as number[]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (rows[i - 2] as number[])[j - 2] as number + 1)
      row[j] = best
    }
  }
  return (rows[a.length] as number[])[b.length] as number
}

/**
 * The known name closest to `name`, or null when none is close enough to be a likely typo: at
 * most a third of the longer name's length in edits (and at least one). Case is ignored when
 * measuring; ties go to the name listed first.
 */
export function closestName (name: string, known: readonly string[]): string | null {
  const wanted = name.toLowerCase()
  let best: string | null = null
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of known) {
    if (candidate === name) continue
    const distance = editDistance(wanted, candidate.toLowerCase())
    const allowed = Math.max(1, Math.floor(Math.max(name.length, candidate.length) / 3))
    if (distance <= allowed && distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}
