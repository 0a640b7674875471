// Serializes asynchronous tasks per key. The write pipeline takes one key per entry
// (environment, locale, collection, slug), so the writes to one entry apply in order; the
// asset library takes one per folder while it picks a free file name.
import { TransientMap } from './transient-map.js'

export class KeyedMutex {
  // A key per task in flight: transient, so finished chains die young (see transient-map.ts).
  private readonly tails = new TransientMap<string, Promise<void>>()

  /** Runs `task` after every task queued earlier under `key` has settled; returns its result. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key)
    let release!: () => void
    const done = new Promise<void>(resolve => { release = resolve })
    // The chain is built from `done` promises only, so it never rejects whatever the tasks do.
    const tail = previous === undefined ? done : previous.then(() => done)
    this.tails.set(key, tail)
    try {
      if (previous !== undefined) await previous
      return await task()
    } finally {
      release()
      // The last task of a burst removes the key, so idle collections cost no memory.
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }

  /** How many keys have a task running or queued (for tests and diagnostics). */
  get size (): number {
    return this.tails.size
  }
}
