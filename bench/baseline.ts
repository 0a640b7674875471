// The bare-Fastify baseline: answers every GET with the exact bytes of the measured response,
// and the headers that describe them (type, encoding, Vary). It is sent the same requests as
// Lectern (path, query string, headers), so a row's ratio compares Lectern's work against pure
// HTTP + Fastify overhead for the same request and body; for a compressed row, the body is the
// compressed bytes Lectern sent, sent as they are.
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

const [bodyFile, port, headersJson] = process.argv.slice(2)
if (bodyFile === undefined || port === undefined) throw new Error('usage: baseline.js <body-file> <port, 0 for any> [headers as JSON]')
const body = readFileSync(bodyFile)
const headers = headersJson === undefined ? { 'content-type': 'application/json; charset=utf-8' } : JSON.parse(headersJson) as Record<string, string>

const fastify = Fastify({ logger: false })
fastify.get('/*', async (_request, reply) => reply.headers(headers).send(body))
await fastify.listen({ port: Number(port), host: '127.0.0.1' })
// Port 0 lets the kernel pick one: the parent learns which from this first line on stdout.
const address = fastify.server.address()
process.stdout.write(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : Number(port) }) + '\n')
