// Durable appends to one file with group commit: texts appended while a write and its fdatasync
// are under way wait, and then go to disk together, with one write and one fdatasync. The
// system calls run on libuv's thread pool; the main thread pays a buffer and two callbacks per
// batch, and a string push per append. An append resolves once its text and every text before
// it are on disk.
//
// A batch that fails (a short disk, an I/O error) is cut off the file again (truncate to the
// last good size, fdatasync), so the file never holds a partial record that later appends would
// follow; if even that fails, every later append fails: the file's end is unknown.
import type { FileHandle } from 'node:fs/promises'

/** What the appender needs of a file handle (tests wrap a real one to make a call fail). */
export type AppendTarget = Pick<FileHandle, 'write' | 'datasync' | 'truncate' | 'close'>

interface Batch {
  texts: string[]
  done: Promise<void>
  resolve: () => void
  reject: (err: Error) => void
}

function newBatch (): Batch {
  const batch = { texts: [] } as unknown as Batch
  batch.done = new Promise<void>((resolve, reject) => { batch.resolve = resolve; batch.reject = reject })
  // A batch nobody awaits (every caller gone) must not be an unhandled rejection.
  batch.done.catch(() => {})
  return batch
}

export class GroupAppender {
  private filling: Batch | null = null
  private readonly tasks: Array<() => Promise<void>> = []
  private running: Promise<void> = Promise.resolve()
  private draining = false
  private broken: Error | null = null
  private batches = 0

  /** `size`: the file's length, where the first append goes. */
  constructor (private target: AppendTarget, private size: number) {}

  /** Bytes in the file, as far as appends that resolved go. */
  get bytes (): number {
    return this.size
  }

  /** Batches written so far (each one write and one fdatasync). */
  get commits (): number {
    return this.batches
  }

  append (text: string): Promise<void> {
    if (this.broken !== null) return Promise.reject(this.broken)
    const batch = this.filling ??= newBatch()
    batch.texts.push(text)
    this.start()
    return batch.done
  }

  /**
   * Runs `task` when no batch is being written, before any batch not yet started. The task may
   * swap the file (`replace`), e.g. for an atomic rewrite.
   */
  exclusive<T> (task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.tasks.push(async () => { await task().then(resolve, reject) })
      this.start()
    })
  }

  /** From inside an exclusive task: appends go to `target` from now on, at `size`. Returns the file left. */
  replace (target: AppendTarget, size: number): AppendTarget {
    const old = this.target
    this.target = target
    this.size = size
    return old
  }

  /** Makes every later append fail with `err` (the file's durability is in doubt). */
  fail (err: Error): void {
    this.broken ??= err
  }

  /** Resolves once every append and task so far is over. */
  async idle (): Promise<void> {
    while (this.draining) await this.running
  }

  /** Waits for what is under way, then closes the file. */
  async close (): Promise<void> {
    await this.idle()
    this.broken ??= new Error('the change log is closed')
    await this.target.close()
  }

  private start (): void {
    if (this.draining) return
    this.draining = true
    this.running = this.drain()
  }

  private async drain (): Promise<void> {
    try {
      for (;;) {
        const task = this.tasks.shift()
        if (task !== undefined) {
          await task()
          continue
        }
        const batch = this.filling
        if (batch === null) return
        this.filling = null
        await this.commit(batch)
      }
    } finally {
      // Cleared in the same step that found nothing left, so the next append starts a new drain.
      this.draining = false
    }
  }

  private async commit (batch: Batch): Promise<void> {
    if (this.broken !== null) return batch.reject(this.broken)
    const bytes = Buffer.from(batch.texts.join(''), 'utf8')
    try {
      let offset = 0
      while (offset < bytes.length) {
        offset += (await this.target.write(bytes, offset, bytes.length - offset, this.size + offset)).bytesWritten
      }
      await this.target.datasync()
    } catch (err) {
      await this.undo(err as Error)
      return batch.reject(err as Error)
    }
    this.size += bytes.length
    this.batches++
    batch.resolve()
  }

  /** Cuts a failed batch off the file; if that fails too, the appender is broken for good. */
  private async undo (err: Error): Promise<void> {
    try {
      await this.target.truncate(this.size)
      await this.target.datasync()
    } catch {
      this.broken = new Error(`the change log cannot be appended to: a failed write could not be undone (${err.message})`)
    }
  }
}
