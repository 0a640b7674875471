// The process entry point and the only reader of process.env: parse the settings, build
// the logger and the instance, register the app, wire graceful shutdown, listen.
import Fastify, { type FastifyBaseLogger } from 'fastify'
import app from './app.js'
import { ConfigError, loadConfig, type Config } from './lib/config.js'
import { createLogger, serverOptions } from './lib/server-options.js'

function settings (): Config {
  try {
    return loadConfig(process.env)
  } catch (err) {
    if (err instanceof ConfigError) {
      // One line naming the setting; no stack trace.
      process.stderr.write(`lectern: invalid setting ${err.message}\n`)
      process.exit(1)
    }
    throw err
  }
}

async function main (): Promise<void> {
  const config = settings()
  // Typed as Fastify's logger so the instance is the plain FastifyInstance the plugins are written for.
  const logger: FastifyBaseLogger = createLogger(config)
  const fastify = Fastify({ ...serverOptions(config), loggerInstance: logger })

  let closing = false
  const shutdown = (signal: string): void => {
    if (closing) return
    closing = true
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests')
    // A hard limit so a stuck request cannot keep the process (and the container) alive.
    const timer = setTimeout(() => {
      logger.error('shutdown took too long, exiting')
      process.exit(1)
    }, 10_000)
    timer.unref()
    fastify.close().then(() => {
      logger.info('stopped')
      process.exit(0)
    }, (err: unknown) => {
      logger.error({ err }, 'error while shutting down')
      process.exit(1)
    })
  }
  process.once('SIGTERM', () => { shutdown('SIGTERM') })
  process.once('SIGINT', () => { shutdown('SIGINT') })

  try {
    await fastify.register(app, { config })
    await fastify.listen({ port: config.port, host: config.host })
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    logger.fatal(`start-up failed: ${message}`)
    process.exit(1)
  }
}

await main()
