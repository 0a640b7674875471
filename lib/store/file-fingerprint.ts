// The file store's content fingerprint (ContentStore.contentFingerprint): a digest of the path,
// size and modification time of every entry file under `<data>/content/`, in path order. It
// changes when a file is added, removed or rewritten, by the store or by hand, so data derived
// from the content and saved across restarts (the reference index) can tell that it is stale.
//
// Cost: a folder listing per bucket and a stat per file, no file read. Synchronous, because it
// runs when no request is served (at start and at close) and the synchronous calls are several
// times faster than as many promises: 130–400 ms for 20,000 files on a loaded 2-core machine
// (the promise form took 500 ms in batches of 256 and 1.6–2.3 s all at once).
import { createHash, type Hash } from 'node:crypto'
import { readdirSync, statSync } from 'node:fs'
import path from 'node:path'

const ENTRY_EXT = '.json'

/** `list(dir)`, or nothing when `dir` is gone (removed while the walk ran). */
function orNothing<T> (list: () => T[]): T[] {
  try {
    return list()
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT' || (err as { code?: string }).code === 'ENOTDIR') return []
    throw err
  }
}

const folders = (dir: string): string[] =>
  orNothing(() => readdirSync(dir, { withFileTypes: true }).filter(e => e.isDirectory()).map(e => e.name).sort())

/** Adds each entry file of one bucket folder: name, size and modification time in ns. */
function addBucket (hash: Hash, dir: string, prefix: string): void {
  const names = orNothing(() => readdirSync(dir)).filter(name => name.endsWith(ENTRY_EXT) && !name.startsWith('.')).sort()
  for (const name of names) {
    const info = orNothing(() => [statSync(path.join(dir, name), { bigint: true })])[0]
    hash.update(`${prefix}${name}\u0000${info === undefined ? 'gone' : `${info.size}:${info.mtimeNs}`}\n`)
  }
}

/** The digest of every `<environment>/<collection>/<locale>/<slug>.json` under `root`. */
export function contentFingerprint (root: string): string {
  const hash = createHash('sha256')
  for (const environment of folders(root)) {
    for (const collection of folders(path.join(root, environment))) {
      for (const locale of folders(path.join(root, environment, collection))) {
        addBucket(hash, path.join(root, environment, collection, locale), `${environment}/${collection}/${locale}/`)
      }
    }
  }
  return `file:${hash.digest('base64url')}`
}
