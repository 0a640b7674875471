import net from 'node:net'
import t, { type Test } from 'tap'
import pg from 'pg'
import { LocalBus, type BusMessage } from '../../../lib/cluster/bus.js'
import { PostgresBus, parsePayload, payload } from '../../../lib/cluster/postgres-bus.js'
import { postgresUrl } from '../../fixtures/postgres.js'

const log = { info () {}, warn () {} }

/** Resolves with the first value `poll` returns that is not undefined, polling every 20 ms (rejects after `ms`). */
async function until<T> (poll: () => T | undefined, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = poll()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

t.test('payloads: own announcements and malformed ones are skipped', async t => {
  t.strictSame(parsePayload(payload('a', 'content', { slug: 'x' }), 'b'), { topic: 'content', data: { slug: 'x' } })
  t.equal(parsePayload(payload('a', 'content', {}), 'a'), null, 'its own')
  for (const text of [undefined, '', 'nope', 'null', '[]', '{"o":"a","t":1,"d":{}}', '{"o":"a","t":"x","d":[]}', '{"o":"a","t":"x","d":null}']) {
    t.equal(parsePayload(text, 'b'), null, String(text))
  }
})

t.test('LocalBus: alone, nothing to hear', async t => {
  const bus = new LocalBus()
  t.strictSame([bus.listening, bus.origin], [true, 'local'])
  await bus.publish()
  bus.subscribe()()
  bus.onResync()()
  bus.onLost()()
  await bus.close()
})

t.test('two processes on one schema hear each other, not themselves; other schemas hear nothing', async t => {
  const url = await postgresUrl(t, 'bus-shared')
  const other = await postgresUrl(t)
  const buses = [new PostgresBus({ connection: { connectionString: url }, log }), new PostgresBus({ connection: { connectionString: url }, log }), new PostgresBus({ connection: { connectionString: other }, log })]
  t.teardown(async () => { for (const bus of buses) await bus.close() })
  const heard: BusMessage[][] = [[], [], []]
  buses.forEach((bus, i) => { bus.subscribe(m => { heard[i]?.push(m) }) })
  await Promise.all(buses.map(async bus => { await bus.start() }))
  t.ok(buses.every(bus => bus.listening))
  t.match(buses[0]?.channel, /^lectern_[0-9a-f]{16}$/)
  t.equal(buses[0]?.channel, buses[1]?.channel)
  t.not(buses[0]?.channel, buses[2]?.channel)
  await buses[0]?.publish('schema', { name: 'post' })
  await until(() => heard[1]?.length === 1 ? true : undefined)
  t.strictSame(heard[1], [{ topic: 'schema', data: { name: 'post' } }])
  await buses[2]?.publish('schema', { name: 'elsewhere' })
  // The third bus's own note reaches nobody of the first schema; bus 1's next note still arrives.
  await buses[1]?.publish('schema', { name: 'page' })
  await until(() => heard[0]?.length === 1 ? true : undefined)
  t.strictSame(heard[0], [{ topic: 'schema', data: { name: 'page' } }])
  t.strictSame([heard[1]?.length, heard[2]?.length], [1, 0], 'no echo, nothing across schemas')
})

t.test('a lost listening connection comes back by itself, and says announcements may have been missed', async t => {
  const url = await postgresUrl(t)
  // Named, so the test cuts its own connections only (other test files share the server).
  const name = `bus-cut-${process.pid}-${Date.now()}`
  const bus = new PostgresBus({ connection: { connectionString: url, application_name: name }, log, retryMinMs: 20 })
  const peer = new PostgresBus({ connection: { connectionString: url }, log })
  t.teardown(async () => { await bus.close(); await peer.close() })
  await bus.start()
  await peer.start()
  let resyncs = 0
  let losses = 0
  bus.onResync(() => { resyncs++ })
  bus.onResync(() => { throw new Error('a failing listener does not stop the others') })
  bus.onLost(() => { losses++ })
  const heard: BusMessage[] = []
  bus.subscribe(m => { heard.push(m) })
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  t.teardown(async () => { await admin.end() })
  // The bus's listening connection is cut, as a database restart would.
  const cut = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [name])
  t.equal(cut.rowCount, 1)
  await until(() => resyncs > 0 ? true : undefined)
  t.equal(losses, 1, 'the loss was told first')
  t.equal(bus.listening, true, 'listening again')
  await peer.publish('content', { seq: 1 })
  await until(() => heard.length > 0 ? true : undefined)
  t.strictSame(heard, [{ topic: 'content', data: { seq: 1 } }])
})

/** A TCP relay to the database whose open connections can be frozen (bytes stop, nothing closes), as a cut network does. */
async function relay (t: Test, url: string): Promise<{ url: string, freeze: () => void }> {
  const target = new URL(url)
  const open = new Set<net.Socket>()
  const server = net.createServer(socket => {
    const upstream = net.connect(Number(target.port), target.hostname)
    for (const s of [socket, upstream]) {
      open.add(s)
      s.on('error', () => {})
      s.on('close', () => { open.delete(s) })
    }
    socket.pipe(upstream).pipe(socket)
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
  t.teardown(() => { for (const s of open) s.destroy(); server.close() })
  const relayed = new URL(url)
  relayed.port = String((server.address() as net.AddressInfo).port)
  return {
    url: relayed.href,
    freeze: () => { for (const s of open) { s.unpipe(); s.pause() } }
  }
}

t.test('a listening connection that stops answering is dropped and made again', async t => {
  const { url, freeze } = await relay(t, await postgresUrl(t))
  const bus = new PostgresBus({ connection: { connectionString: url }, log, checkEveryMs: 50, checkTimeoutMs: 200, retryMinMs: 20 })
  t.teardown(async () => { await bus.close() })
  await bus.start()
  let resyncs = 0
  bus.onResync(() => { resyncs++ })
  freeze()
  await until(() => resyncs > 0 ? true : undefined)
  t.ok(bus.listening, 'listening on a new connection')
  await bus.close()
  t.equal(bus.listening, false, 'closed: not listening')
  await t.rejects(bus.publish('x', {}), /not connected/)
})

t.test('start rejects when the database cannot be reached', async t => {
  const bus = new PostgresBus({ connection: { connectionString: 'postgres://nobody:x@127.0.0.1:1/none', connectionTimeoutMillis: 500 }, log })
  await t.rejects(bus.start())
  t.equal(bus.listening, false)
  t.throws(() => bus.channel, /not started/)
  await bus.close()
})
