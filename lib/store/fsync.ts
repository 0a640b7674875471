// Durable file writes for the file store: temp file in the same folder, write, fsync, rename,
// then fsync the folder so the rename itself survives a crash. Folder fsyncs are shared: one
// fsync covers every rename that happened before it started.
import { open, rename, rm, unlink } from 'node:fs/promises'
import path from 'node:path'

/** Temporary files are hidden and end in `.tmp`: never a valid entry file name. */
export const TEMP_SUFFIX = '.tmp'

export function isTempFile (name: string): boolean {
  return name.startsWith('.') && name.endsWith(TEMP_SUFFIX)
}

let counter = 0

/** Flushes a folder's entries (renames, unlinks, new files) to disk. */
export async function fsyncDir (dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } catch (err) {
    // Some file systems cannot fsync a folder; the data itself is still synced.
    const code = (err as { code?: string }).code
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'ENOTSUP') throw err
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

/** Writes `text` to `dir/name` atomically and durably: a crash leaves the old or the new file. */
export async function writeFileDurably (dir: string, name: string, text: string, syncer: DirSyncer): Promise<void> {
  const temp = path.join(dir, `.${name}.${process.pid}.${++counter}${TEMP_SUFFIX}`)
  const handle = await open(temp, 'wx', 0o644)
  try {
    try {
      await handle.writeFile(text, 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, path.join(dir, name))
  } catch (err) {
    await rm(temp, { force: true })
    throw err
  }
  await syncer.sync()
}

/** Removes `dir/name` durably; false when there was no such file. */
export async function removeFileDurably (dir: string, name: string, syncer: DirSyncer): Promise<boolean> {
  try {
    await unlink(path.join(dir, name))
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return false
    throw err
  }
  await syncer.sync()
  return true
}
