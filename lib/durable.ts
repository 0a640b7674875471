// Atomic, durable file writes, for everything Lectern keeps on disk outside SQLite and the
// file store's entries (schema files, the reference index, asset records, uploads and transform
// variants): a temp file in the target's folder, write, fsync, rename over the target, then
// fsync the folder so the rename itself survives a crash. A reader sees the old file or the
// new one, never a part. (The file store's bulk entry writes do the same steps synchronously
// in worker threads: lib/store/writer.ts.)
import { randomUUID } from 'node:crypto'
import { open, rename, rm, unlink } from 'node:fs/promises'
import path from 'node:path'

/** Temporary files are hidden and end in `.tmp`: never a valid entry, schema or asset name. */
export const TEMP_SUFFIX = '.tmp'

export function isTempFile (name: string): boolean {
  return name.startsWith('.') && name.endsWith(TEMP_SUFFIX)
}

/** A fresh hidden temporary path in `dir`, named after `label` so a leftover says what it was. */
export function tempPathFor (dir: string, label = 'tmp'): string {
  return path.join(dir, `.${label}.${randomUUID()}${TEMP_SUFFIX}`)
}

// Codes of file systems that cannot fsync a folder; the data itself is still synced.
const NO_DIR_SYNC = new Set(['EINVAL', 'EISDIR', 'EPERM', 'ENOTSUP', 'EBADF'])

/** Flushes a folder's entries (renames, unlinks, new files) to disk. */
export async function fsyncDir (dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } catch (err) {
    if (!NO_DIR_SYNC.has((err as NodeJS.ErrnoException).code ?? '')) throw err
  } finally {
    await handle.close()
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

/**
 * Coalesces folder fsyncs: a caller joins a sync that has not started yet, or queues one to
 * start when the running one ends (a running sync may have begun before the caller's rename).
 */
export class DirSyncer {
  private running: Promise<void> | null = null
  private next: Promise<void> | null = null

  constructor (private readonly dir: string) {}

  sync (): Promise<void> {
    if (this.next !== null) return this.next
    const start = (): Promise<void> => {
      this.next = null
      const run = fsyncDir(this.dir)
      this.running = run
      const clear = (): void => { if (this.running === run) this.running = null }
      run.then(clear, clear)
      return run
    }
    if (this.running === null) return start()
    const next = this.running.then(start, start)
    this.next = next
    return next
  }
}

/**
 * Writes `data` to `file` atomically and durably: a crash leaves the old or the new file. With
 * a syncer (for `file`'s folder), concurrent writers share the folder fsync.
 */
export async function writeFileAtomic (file: string, data: string | Uint8Array, syncer?: DirSyncer): Promise<void> {
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
  await (syncer === undefined ? fsyncDir(dir) : syncer.sync())
}

/** Removes `file` durably; false when there was no such file. */
export async function removeFileDurably (file: string, syncer?: DirSyncer): Promise<boolean> {
  try {
    await unlink(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw err
  }
  await (syncer === undefined ? fsyncDir(path.dirname(file)) : syncer.sync())
  return true
}
