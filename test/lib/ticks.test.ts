// keepTickShape (lib/ticks.ts): process.nextTick's inline caches stay monomorphic through full
// garbage collections that run while no tick is queued. Each case runs in its own process, with
// V8's natives syntax on to read the caches' state.
import t, { type Test } from 'tap'
import { evalModule, sourceUrl } from '../helper.js'

const ticksModule = sourceUrl('lib', 'ticks.ts')

/** The states of the nextTick literal's property-definition caches after ten idle full GCs. */
async function cacheStates (t: Test, keep: boolean): Promise<string[]> {
  const script = `
    const { keepTickShape, tickShapeKept } = await import(${JSON.stringify(ticksModule)})
    if (${String(keep)}) { keepTickShape(); keepTickShape(); if (!tickShapeKept()) throw new Error('nothing kept') }
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 500; i++) process.nextTick(() => {})
      await new Promise(resolve => setImmediate(resolve))
      globalThis.gc()
    }
    %DebugPrint(process.nextTick);
  `
  // V8 prints to the stdout file itself: evalModule collects stdout in a file.
  const stdout = await evalModule(t, script, ['--expose-gc', '--allow-natives-syntax'])
  return [...stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map(m => m[1] ?? '')
}

t.test('without it, idle full GCs leave the nextTick caches megamorphic (the hazard is real)', async t => {
  const states = await cacheStates(t, false)
  t.equal(states.length, 4, 'four computed-key definitions in the tick literal')
  // If this fails, Node no longer builds ticks this way and lib/ticks.ts can go.
  t.ok(states.includes('MEGAMORPHIC'), `states: ${states.join(', ')}`)
})

t.test('with a tick kept, they stay monomorphic', async t => {
  const states = await cacheStates(t, true)
  t.same(states, ['MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC'])
})
