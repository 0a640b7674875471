// A request's logger, made only when something is logged. Fastify gives every request a child
// logger bound to its id; with pino that costs a child object and the serialized bindings per
// request, although at `warn` and above a request that goes well logs nothing. Pure: works on
// anything shaped like a pino logger.
//
// Two ways in (app.ts lecternServer): when Fastify has the logger (at `info` and below), it makes
// a request's logger with the root's own `child()`, so a root whose `child()` defers
// (deferringChildren) costs no check. Above `info` Fastify has no logger, and a
// `childLoggerFactory` gives each request a DeferredChildLogger of Lectern's; Fastify checks each
// child it returns (an array and a filter), still far less than the machinery it skips.

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
 * that child on the first line that its level lets through. Its own children are deferred too:
 * a child of a deferred child makes both when it first logs. Options that change the level make
 * the child at once, since the parent's level would not be the child's.
 */
export class DeferredChildLogger implements Record<LogMethod, LogFn> {
  #made: ParentLogger | undefined

  constructor (
    private readonly parent: ParentLogger | DeferredChildLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object = {}
  ) {
    if ('level' in options) this.#made = this.make()
  }

  get level (): string {
    return this.#made?.level ?? this.parent.level
  }

  isLevelEnabled (level: string): boolean {
    return (this.#made ?? this.parent).isLevelEnabled(level)
  }

  child (bindings: Record<string, unknown>, options?: object): DeferredChildLogger {
    return new DeferredChildLogger(this, bindings, options)
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
    this.#made ??= this.make()
    return this.#made
  }

  /** The real child: of the parent, made first when it is deferred too. */
  private make (): ParentLogger {
    const parent = this.parent instanceof DeferredChildLogger ? this.parent.made() : this.parent
    return parent.child(this.bindings, this.options)
  }
}

/**
 * `parent` as the root logger Fastify is given: the same logger (its lines, level and bindings,
 * by prototype, as pino makes its own children), except that `child()` gives a
 * DeferredChildLogger of `parent`.
 */
export function deferringChildren<T extends ParentLogger> (parent: T): T {
  const root = Object.create(parent) as T
  Object.defineProperty(root, 'child', {
    value: (bindings: Record<string, unknown>, options?: object) => new DeferredChildLogger(parent, bindings, options)
  })
  return root
}
