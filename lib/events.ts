// A small synchronous event bus. Listeners run in emit's call so that a listener that must
// persist before the reply (the webhook outbox) can; each listener's failure is contained.
import type { CmsEvent } from '../types/events.js'

export type EventListener = (event: CmsEvent) => void | Promise<void>
export type ListenerErrorHandler = (err: unknown, event: CmsEvent) => void

export class EventBus {
  private readonly listeners = new Set<EventListener>()
  /** Listeners' promises not yet settled: see `settled`. */
  private readonly pending = new Set<Promise<void>>()

  constructor (private readonly onError: ListenerErrorHandler) {}

  /** Adds a listener; returns a function that removes it. */
  on (listener: EventListener): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  /** Never throws and never waits: a listener's error or rejection is reported, not raised. */
  emit (event: CmsEvent): void {
    for (const listener of this.listeners) {
      try {
        const result = listener(event)
        if (result !== undefined && typeof (result as Promise<void>).catch === 'function') {
          const tracked = (result as Promise<void>).catch(err => { this.report(err, event) })
          this.pending.add(tracked)
          void tracked.finally(() => { this.pending.delete(tracked) })
        }
      } catch (err) {
        this.report(err, event)
      }
    }
  }

  /**
   * Resolves once every asynchronous listener has finished with every event emitted so far,
   * including events those listeners emitted themselves. A plugin awaits it on close before it
   * closes what its listener writes to. (A listener that answered every event with another
   * would keep it waiting; none does.)
   */
  async settled (): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending)
  }

  /** The error handler, contained too: a report that throws must not break emit or `settled`. */
  private report (err: unknown, event: CmsEvent): void {
    try {
      this.onError(err, event)
    } catch {}
  }
}
