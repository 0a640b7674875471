// Each request's logger, made by Fastify's documented `childLoggerFactory` option. Fastify's
// default gives every request a pino child bound to its id at once (its bindings serialized, a new
// logger object), which is most of a logger's cost on a small read. Below info (the default level
// logs every request twice anyway) most requests log nothing: the child here is made on the first
// line logged at an enabled level, so a line still carries the request id and goes through pino
// as before; a request that logs nothing makes none.
import { levels, type Bindings, type ChildLoggerOptions, type Level } from 'pino'

/** What is used of the logger Fastify was given (a pino logger with pino's levels). */
export interface ParentLogger {
  level: string
  child: (bindings: Bindings, options?: ChildLoggerOptions) => unknown
}

type LogMethod = (...args: unknown[]) => void
type ChildLogger = Record<Level, LogMethod> & ParentLogger

/** The logger a request gets: its parent's level, and its child on the first line logged. */
export class RequestLogger {
  readonly #parent: ParentLogger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #child: ChildLogger | null = null

  constructor (parent: ParentLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  get level (): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level
  }

  // Methods on the prototype, not arrow fields: a request makes one object, not seven closures.
  fatal (...args: unknown[]): void { this.#log('fatal', args) }
  error (...args: unknown[]): void { this.#log('error', args) }
  warn (...args: unknown[]): void { this.#log('warn', args) }
  info (...args: unknown[]): void { this.#log('info', args) }
  debug (...args: unknown[]): void { this.#log('debug', args) }
  trace (...args: unknown[]): void { this.#log('trace', args) }
  silent (): void {}

  child (bindings: Bindings, options?: ChildLoggerOptions): unknown {
    return this.#real().child(bindings, options)
  }

  isLevelEnabled (level: string): boolean {
    const threshold = levels.values[this.level]
    const value = levels.values[level]
    return threshold !== undefined && value !== undefined && value >= threshold
  }

  #log (level: Level, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return
    const child = this.#real()
    child[level].apply(child, args)
  }

  #real (): ChildLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options) as ChildLogger
    return this.#child
  }
}

/** Fastify's `childLoggerFactory`: a RequestLogger for the request, bound to its id. */
export function requestLogger<L extends ParentLogger> (logger: L, bindings: Bindings, options: ChildLoggerOptions): L {
  return new RequestLogger(logger, bindings, options) as unknown as L
}
