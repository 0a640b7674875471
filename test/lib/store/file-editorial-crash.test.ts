// The file store's versions under kill -9: a child process updates a few entries in a loop, each
// write keeping versions (keepVersions 3), and prints each write once it resolved; the test kills
// it at a random moment, reopens the store and checks that every acknowledged write has its
// version, and that no version exists of a write the entry never showed (the newest version is the
// entry file, the older ones are appended before it is replaced: file-versions.ts). Several cycles
// on one data dir.
// More cycles: LECTERN_CRASH_CYCLES=20 npx tap test/lib/store/file-editorial-crash.test.ts
import t, { type Test } from 'tap'
import { FileStore } from '../../../lib/store/index.js'
import { sourceUrl, tempDir } from '../../helper.js'
import { killWhen } from '../../fixtures/processes.js'

const CYCLES = Number(process.env.LECTERN_CRASH_CYCLES ?? 2)
const WRITERS = 4
const KEEP = 3
const scope = { environment: 'default', locale: null }

/** The child: each writer creates its entry, then updates it with n = 1, 2, … until killed. */
function childScript (dataDir: string, cycle: number): string {
  return `const { FileStore } = await import(${JSON.stringify(sourceUrl('lib', 'store', 'index.ts'))})
const store = new FileStore({ dataDir: ${JSON.stringify(dataDir)} })
await store.open()
process.stdout.write('ready\\n')
const scope = { environment: 'default', locale: null }
const writer = async w => {
  const slug = 'c${cycle}-w' + w
  for (let n = 0; ; n++) {
    const input = { slug, status: 'published', data: { n }, keepVersions: ${KEEP} }
    await (n === 0 ? store.create(scope, 'posts', input) : store.update(scope, 'posts', input))
    process.stdout.write(w + ' ' + n + '\\n')
  }
}
for (let w = 0; w < ${WRITERS}; w++) writer(w)
`
}

/** Runs the child until it has acknowledged `acks` writes, kills it, and returns the last n acknowledged per writer. */
async function crashAfter (t: Test, dataDir: string, cycle: number, acks: number): Promise<Map<number, number>> {
  const lines = await killWhen(t, childScript(dataDir, cycle), stdout => stdout.split('\n').length > acks + 2)
  const last = new Map<number, number>()
  // Every whole line is an acknowledged write (after the first, 'ready'); a line cut by the kill is not.
  for (const line of lines.slice(1)) {
    const [w, n] = line.split(' ').map(Number) as [number, number]
    last.set(w, Math.max(last.get(w) ?? -1, n))
  }
  return last
}

t.test('every acknowledged write keeps its version through kill -9, and no unwritten one appears', async t => {
  const dataDir = tempDir(t)
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const wanted = 10 + Math.floor(Math.random() * 80)
    const last = await crashAfter(t, dataDir, cycle, wanted)
    const store = new FileStore({ dataDir })
    await store.open()
    const problems: string[] = []
    for (let w = 0; w < WRITERS; w++) {
      const slug = `c${cycle}-w${w}`
      const acked = last.get(w) ?? -1
      const entry = await store.get(scope, 'posts', slug)
      const n = (entry?.data as { n?: number } | undefined)?.n ?? -1
      // The write after the last acknowledged one may or may not have landed.
      if (n !== acked && n !== acked + 1) problems.push(`${slug}: acknowledged ${acked}, the entry has ${n}`)
      const versions = await store.versions(scope, 'posts', slug, KEEP, 0, KEEP)
      const numbers = await Promise.all(versions.items.map(async v => ((await store.version(scope, 'posts', slug, v.version, KEEP))?.data as { n: number }).n))
      if (acked >= 0 && !numbers.includes(acked)) problems.push(`${slug}: no version of the acknowledged write ${acked} (${numbers.join(',')})`)
      if (numbers.some(v => v > n)) problems.push(`${slug}: a version of a write the entry never showed (${numbers.join(',')} > ${n})`)
    }
    t.strictSame(problems, [], `cycle ${cycle} (killed after ${wanted} writes)`)
    await store.close()
  }
})
