// keepTickShape (lib/ticks.ts): process.nextTick's inline caches stay monomorphic through full
// garbage collections that run while no tick is queued. Each case runs in its own process, with
// V8's natives syntax on to read the caches' state.
import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { tempDir } from '../helper.js'

const root = path.resolve(import.meta.dirname, '..', '..')
// The same TypeScript loader tap gave this process.
const loaderArgs = process.execArgv.filter(a => a.startsWith('--import') || a === '--enable-source-maps')
const tsNodeEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('TS_NODE_')))
const ticksModule = pathToFileURL(path.join(root, 'lib', 'ticks.ts')).href

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
  // V8 prints to the stdout file itself: a file, not a pipe, takes all of it.
  const outFile = path.join(tempDir(t), 'stdout.txt')
  const out = openSync(outFile, 'w')
  let stderr = ''
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [
      ...loaderArgs, '--expose-gc', '--allow-natives-syntax', '--input-type=module', '--eval', script
    ], { cwd: root, env: { ...tsNodeEnv, PATH: process.env.PATH ?? '' }, stdio: ['ignore', out, 'pipe'] })
    child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
    child.once('error', reject)
    child.once('exit', resolve)
  }).finally(() => { closeSync(out) })
  if (code !== 0) throw new Error(`child exited with ${String(code)}: ${stderr}`)
  const stdout = readFileSync(outFile, 'utf8')
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
