// A request's logger, made only when something is logged. Fastify gives every request a child
// logger bound to its id; with pino that costs a child object and the serialized bindings per
// request, although at `warn` and above a request that goes well logs nothing. Pure: works on
// anything shaped like a pino logger.

import type { LogLevel } from './config.js'

/** A level that has a method: every CMS_LOG_LEVEL but `silent`. */
type LogMethod = Exclude<LogLevel, 'silent'>

type LogFn = (...args: unknown[]) => void

/** The part of a pino logger a deferred child needs. */
export interface ParentLogger extends Record<LogMethod, LogFn> {
  level: string
  isLevelEnabled: (level: string) => boolean
  child: (bindings: Record<string, unknown>, options?: object) => ParentLogger
}

/**
 * Behaves like `parent.child(bindings, options)` (the same lines, with the bindings), but makes
 * that child on the first line that its level lets through, or on `child()`. Options that change
 * the level make the child at once, since the parent's level would not be the child's.
 */
export class DeferredChildLogger implements Record<LogMethod, LogFn> {
  #made: ParentLogger | undefined

  constructor (
    private readonly parent: ParentLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object = {}
  ) {
    if ('level' in options) this.#made = parent.child(bindings, options)
  }

  get level (): string {
    return this.#made?.level ?? this.parent.level
  }

  isLevelEnabled (level: string): boolean {
    return (this.#made ?? this.parent).isLevelEnabled(level)
  }

  child (bindings: Record<string, unknown>, options?: object): ParentLogger {
    return this.made().child(bindings, options)
  }

  fatal (...args: unknown[]): void { this.write('fatal', args) }
  error (...args: unknown[]): void { this.write('error', args) }
  warn (...args: unknown[]): void { this.write('warn', args) }
  info (...args: unknown[]): void { this.write('info', args) }
  debug (...args: unknown[]): void { this.write('debug', args) }
  trace (...args: unknown[]): void { this.write('trace', args) }

  private write (method: LogMethod, args: unknown[]): void {
    if (this.#made === undefined && !this.parent.isLevelEnabled(method)) return
    this.made()[method](...args)
  }

  private made (): ParentLogger {
    this.#made ??= this.parent.child(this.bindings, this.options)
    return this.#made
  }
}
