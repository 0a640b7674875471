// The bare-Fastify baseline: answers every GET with the exact bytes of the measured response.
// It is sent the same requests as Lectern (path, query string, headers), so a row's ratio
// compares Lectern's work against pure HTTP + Fastify overhead for the same request and body.
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

const [bodyFile, port] = process.argv.slice(2)
if (bodyFile === undefined || port === undefined) throw new Error('usage: baseline.js <body-file> <port, 0 for any> [content-type]')
const body = readFileSync(bodyFile)
const contentType = process.argv[4] ?? 'application/json; charset=utf-8'

const fastify = Fastify({ logger: false })
fastify.get('/*', async (_request, reply) => reply.header('content-type', contentType).send(body))
await fastify.listen({ port: Number(port), host: '127.0.0.1' })
// Port 0 lets the kernel pick one: the parent learns which from this first line on stdout.
const address = fastify.server.address()
process.stdout.write(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : Number(port) }) + '\n')
