// Small file-system helpers for durable, atomic writes (temp file + fsync + rename).
import { randomUUID } from 'node:crypto'
import { open, rename, rm } from 'node:fs/promises'
import path from 'node:path'

/** A hidden temporary name beside `target`: never a valid asset name (those never start with '.'). */
export function tempPathFor (dir: string, label = 'tmp'): string {
  return path.join(dir, `.${label}-${randomUUID()}.tmp`)
}

/** Makes a directory entry (a rename or unlink in `dir`) durable. Best effort where unsupported. */
export async function fsyncDir (dir: string): Promise<void> {
  let handle
  try {
    handle = await open(dir, 'r')
    await handle.sync()
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw err
  } finally {
    await handle?.close()
  }
}

/** Flushes a file's contents to disk. */
export async function fsyncFile (file: string): Promise<void> {
  const handle = await open(file, 'r+')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Writes `data` to `file` atomically: a crash leaves the old or the new contents, never a torn file. */
export async function writeFileAtomic (file: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(file)
  const temp = tempPathFor(dir, path.basename(file))
  const handle = await open(temp, 'wx', 0o644)
  try {
    try {
      await handle.writeFile(data)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, file)
  } catch (err) {
    await rm(temp, { force: true })
    throw err
  }
  await fsyncDir(dir)
}
