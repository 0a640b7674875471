// Rebuilding the metadata from the files on disk (only when the metadata is missing).
import { opendir, stat } from 'node:fs/promises'
import path from 'node:path'
import { inspectFile } from './inspect.js'
import { isMissing, joinAssetPath, MAX_FOLDER_DEPTH, splitAssetPath, type AssetRoots } from './paths.js'
import type { AssetLogger, AssetMeta } from './types.js'

/**
 * A name the API could have produced or can address: ASCII letters, digits, '.', '-', '_', not
 * starting with a dot. Hidden files (the library's own temp files among them) are skipped.
 */
const ADDRESSABLE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** Every regular file under each environment's directory, inspected. Symbolic links are never followed. */
export async function scanAssets (roots: AssetRoots, log: AssetLogger): Promise<AssetMeta[]> {
  const out: AssetMeta[] = []
  const environmentDirs = new Set(roots.names.map(name => roots.dir(name)))
  for (const environment of roots.names) {
    const root = roots.dir(environment)
    // Without environments the root is shared by nothing else; with them, each has its own.
    await walk(root, '', 0, async (relative, absolute) => {
      const st = await stat(absolute)
      const { folder, name } = splitAssetPath(relative)
      const inspection = await inspectFile(absolute, name)
      out.push({
        environment,
        path: relative,
        folder,
        name,
        size: st.size,
        ...inspection,
        createdAt: st.mtime.toISOString()
      })
    }, log, environmentDirs)
  }
  return out
}

async function walk (
  dir: string,
  relative: string,
  depth: number,
  visit: (relative: string, absolute: string) => Promise<void>,
  log: AssetLogger,
  skipDirs: ReadonlySet<string>
): Promise<void> {
  let handle
  try {
    handle = await opendir(dir)
  } catch (err) {
    if (isMissing(err)) return
    throw err
  }
  for await (const entry of handle) {
    const absolute = path.join(dir, entry.name)
    const child = joinAssetPath(relative, entry.name)
    if (!ADDRESSABLE.test(entry.name)) {
      if (!entry.name.startsWith('.')) log.warn({ path: child }, 'asset rebuild: skipping a file whose name the API cannot address')
      continue
    }
    if (entry.isDirectory()) {
      // Another environment's directory is never part of this one.
      if (depth < MAX_FOLDER_DEPTH && !skipDirs.has(absolute)) await walk(absolute, child, depth + 1, visit, log, skipDirs)
    } else if (entry.isFile()) {
      await visit(child, absolute)
    }
  }
}
