// TransientMap (lib/transient-map.ts): a Map in behaviour, through its rebuilds; and, once old
// itself, it does not make a young collection promote the values of keys already deleted.
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { TransientMap } from '../../lib/transient-map.js'
import { evalModule, sourceUrl } from '../helper.js'

t.test('answers as a Map does, across rebuilds', async t => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 20 }), value: fc.integer() }),
    fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 20 }) }),
    fc.record({ kind: fc.constant('clear' as const) })
  )
  fc.assert(fc.property(fc.integer({ min: 1, max: 5 }), fc.array(op, { maxLength: 200 }), (period, ops) => {
    const plain = new Map<number, number>()
    const transient = new TransientMap<number, number>(period)
    for (const o of ops) {
      if (o.kind === 'set') {
        if (transient.set(o.key, o.value) !== transient) return false
        plain.set(o.key, o.value)
      } else if (o.kind === 'delete') {
        if (transient.delete(o.key) !== plain.delete(o.key)) return false
      } else {
        transient.clear()
        plain.clear()
      }
      if (transient.size !== plain.size) return false
    }
    for (let key = 0; key <= 20; key++) {
      if (transient.get(key) !== plain.get(key) || transient.has(key) !== plain.has(key)) return false
    }
    // Insertion order survives a rebuild, as a Map keeps it.
    const same = (a: unknown[], b: unknown[]): boolean => JSON.stringify(a) === JSON.stringify(b)
    return same([...transient], [...plain]) && same([...transient.keys()], [...plain.keys()]) &&
      same([...transient.values()], [...plain.values()]) && same([...transient.entries()], [...plain.entries()])
  }), { numRuns: 300 })
  t.pass('300 random sequences of set, delete and clear')
})

t.test('period must be a positive integer', async t => {
  for (const bad of [0, -1, 1.5, Number.NaN]) t.throws(() => new TransientMap(bad), RangeError, String(bad))
})

const moduleUrl = sourceUrl('lib', 'transient-map.ts')

/**
 * Bytes the young collections promote while 50 tasks each put a key with a 1 KB value in an old
 * map, wait a turn and delete it again, 20,000 times (as a lock map does under load). A child
 * process, with small semi-spaces so young collections are many and the count is steady.
 */
async function promotedBytes (t: Test, kind: 'plain' | 'transient'): Promise<number> {
  const script = `
    import v8 from 'node:v8'
    const { TransientMap } = await import(${JSON.stringify(moduleUrl)})
    const map = ${kind === 'plain' ? 'new Map()' : 'new TransientMap()'}
    globalThis.gc(); globalThis.gc()
    const profiler = new v8.GCProfiler()
    profiler.start()
    let next = 0
    const task = async () => {
      while (next < 20000) {
        const key = 'k' + next++
        map.set(key, { payload: new Array(128).fill(key) })
        await new Promise(resolve => setImmediate(resolve))
        map.delete(key)
      }
    }
    await Promise.all(Array.from({ length: 50 }, task))
    const old = s => s.heapSpaceStatistics.find(x => x.spaceName === 'old_space').spaceUsedSize
    let promoted = 0
    for (const s of profiler.stop().statistics) if (s.gcType === 'Scavenge') promoted += old(s.afterGC) - old(s.beforeGC)
    process.stdout.write(String(promoted))
  `
  return Number(await evalModule(t, script, ['--expose-gc', '--max-semi-space-size=1']))
}

t.test('an old map with churning keys: a plain Map makes young collections promote dead values, a TransientMap does not', async t => {
  const [plain, transient] = await Promise.all([promotedBytes(t, 'plain'), promotedBytes(t, 'transient')])
  // The control: if this fails, V8 no longer keeps dead tables' values alive and the class can go.
  t.ok(plain > 5 * 1024 * 1024, `plain Map: ${plain} bytes promoted`)
  t.ok(transient < plain / 5, `TransientMap: ${transient} bytes promoted (plain Map: ${plain})`)
})
