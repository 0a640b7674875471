// The asset files on disk: listed to reconcile the metadata with them at every start, inspected
// to rebuild the metadata when it is missing, and swept of the temp files a crash left.
import { opendir, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { isTempFile } from '../durable.js'
import { inspectFile } from './inspect.js'
import { isMissing, joinAssetPath, MAX_FOLDER_DEPTH, splitAssetPath, type AssetRoots } from './paths.js'
import type { AssetLogger, AssetMeta } from './types.js'

/**
 * A name the API could have produced or can address: ASCII letters, digits, '.', '-', '_', not
 * starting with a dot. Hidden files (the library's own temp files among them) are skipped.
 */
const ADDRESSABLE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** An addressable regular file in an environment's directory. */
export interface AssetFile {
  environment: string
  /** Relative to the environment's directory, with '/' separators. */
  path: string
  absolute: string
}

/** What a walk of the asset directories found. */
export interface AssetFiles {
  files: AssetFile[]
  /** Temp files a crash left (an upload's `.upload.<uuid>.tmp`, an atomic write's), now removed. */
  tempRemoved: number
}

/**
 * Every addressable regular file under each environment's directory. Symbolic links are never
 * followed. Temp files are removed on the way: nothing of this process is writing while it
 * starts. When other processes share the directory (replicas), a temp file may be one of their
 * uploads in progress: only those untouched for `tempMinAgeMs` are removed.
 */
export async function listAssetFiles (roots: AssetRoots, log: AssetLogger, tempMinAgeMs = 0): Promise<AssetFiles> {
  const found: AssetFiles = { files: [], tempRemoved: 0 }
  const visitor: Visitor = {
    log,
    // Without environments the root is shared by nothing else; with them, each has its own.
    skipDirs: new Set(roots.names.map(name => roots.dir(name))),
    file: async () => {},
    temp: async (absolute) => {
      if (tempMinAgeMs > 0 && !await untouchedFor(absolute, tempMinAgeMs)) return
      await rm(absolute, { force: true })
      found.tempRemoved++
    }
  }
  for (const environment of roots.names) {
    visitor.file = async (relative, absolute) => { found.files.push({ environment, path: relative, absolute }) }
    await walk(roots.dir(environment), '', 0, visitor)
  }
  return found
}

/** Whether a file was last written at least `ms` ago (false when it is gone already). */
async function untouchedFor (file: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(file)).mtimeMs >= ms
  } catch (err) {
    if (isMissing(err)) return false
    throw err
  }
}

/** One file's metadata, from what it holds (type, dimensions) and its stat. */
export async function inspectAsset (file: AssetFile): Promise<AssetMeta> {
  const st = await stat(file.absolute)
  const { folder, name } = splitAssetPath(file.path)
  const inspection = await inspectFile(file.absolute, name)
  return { environment: file.environment, path: file.path, folder, name, size: st.size, ...inspection, createdAt: st.mtime.toISOString() }
}

/** Every regular file under each environment's directory, inspected (a rebuild of the metadata). */
export async function scanAssets (roots: AssetRoots, log: AssetLogger): Promise<AssetMeta[]> {
  const out: AssetMeta[] = []
  for (const file of (await listAssetFiles(roots, log)).files) out.push(await inspectAsset(file))
  return out
}

interface Visitor {
  file: (relative: string, absolute: string) => Promise<void>
  temp: (absolute: string) => Promise<void>
  log: AssetLogger
  skipDirs: ReadonlySet<string>
}

async function walk (dir: string, relative: string, depth: number, visitor: Visitor): Promise<void> {
  const { log, skipDirs } = visitor
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
    if (entry.isFile() && isTempFile(entry.name)) {
      await visitor.temp(absolute)
      continue
    }
    if (!ADDRESSABLE.test(entry.name)) {
      if (!entry.name.startsWith('.')) log.warn({ path: child }, 'assets: skipping a file whose name the API cannot address')
      continue
    }
    if (entry.isDirectory()) {
      // Another environment's directory is never part of this one.
      if (depth < MAX_FOLDER_DEPTH && !skipDirs.has(absolute)) await walk(absolute, child, depth + 1, visitor)
    } else if (entry.isFile()) {
      await visitor.file(child, absolute)
    }
  }
}
