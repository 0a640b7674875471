// Concurrency primitives for the asset library and the transform cache.

/** Runs tasks one at a time per key (name allocation in one folder); different keys run freely. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>()

  async run<T> (key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve()
    let release!: () => void
    const current = new Promise<void>(resolve => { release = resolve })
    const tail = previous.then(() => current)
    this.tails.set(key, tail)
    await previous
    try {
      return await task()
    } finally {
      release()
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }
}

/** At most `max` tasks at once; the others wait in arrival order. */
export class Limiter {
  private active = 0
  private readonly waiting: Array<() => void> = []

  constructor (readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error('the limit must be a positive integer')
  }

  /** Tasks waiting for a slot. */
  get pending (): number {
    return this.waiting.length
  }

  /** True when a new task would have to wait. */
  get full (): boolean {
    return this.active >= this.max
  }

  async run<T> (task: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>(resolve => { this.waiting.push(resolve) })
    else this.active++
    try {
      return await task()
    } finally {
      const next = this.waiting.shift()
      // The slot passes straight to the next task, so `active` never drops and rises again.
      if (next !== undefined) next()
      else this.active--
    }
  }
}
