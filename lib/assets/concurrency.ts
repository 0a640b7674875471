// A concurrency limit for the transform cache (the keyed mutex is lib/mutex.ts).

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
