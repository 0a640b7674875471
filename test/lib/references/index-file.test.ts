import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { REFERENCE_INDEX_FILE, IndexFile, OPEN_MARKER } from '../../../lib/references/index-file.js'
import { ReverseIndex } from '../../../lib/references/reverse-index.js'
import { tempDir } from '../../helper.js'

const ref = { field: 'author', collection: 'authors', slug: 'jane' }

async function until (check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise(resolve => setImmediate(resolve))
  for (let i = 0; i < 200 && !check(); i++) await new Promise(resolve => setTimeout(resolve, 10))
}

t.test('missing, then saved on open, then loaded after a clean close', async t => {
  const dir = tempDir(t)
  const file = new IndexFile({ dir, debounceMs: 5 })
  t.same(await file.load('sig'), { status: 'missing', index: null })

  const index = new ReverseIndex()
  index.set({ collection: 'posts', slug: 'p1', locale: null }, [ref])
  await file.open(index, 'sig', true)
  t.ok(existsSync(path.join(dir, OPEN_MARKER)), 'the marker is there while the index is open')
  t.equal(file.saves, 1, 'a rebuilt index is saved at once')

  index.set({ collection: 'posts', slug: 'p2', locale: null }, [ref])
  file.changed()
  file.changed()
  await until(() => file.saves === 2)
  t.equal(file.saves, 2, 'changes are saved after the debounce, together')
  t.same(JSON.parse(readFileSync(path.join(dir, REFERENCE_INDEX_FILE), 'utf8')).referrers.length, 2)

  index.set({ collection: 'posts', slug: 'p3', locale: null }, [ref])
  file.changed()
  await file.close()
  t.notOk(existsSync(path.join(dir, OPEN_MARKER)), 'a clean close removes the marker')

  const again = new IndexFile({ dir })
  const loaded = await again.load('sig')
  t.equal(loaded.status, 'loaded')
  t.ok(loaded.index?.equals(index), 'the close saved the last change')
  t.equal((await again.load('other')).status, 'outdated', 'another reference-field signature')
})

t.test('a marker left behind (a crash) makes the file untrusted', async t => {
  const dir = tempDir(t)
  const file = new IndexFile({ dir, debounceMs: 60_000 })
  await file.open(new ReverseIndex(), 'sig', true)
  // No close: as if the process died.
  t.equal((await new IndexFile({ dir }).load('sig')).status, 'unclean')
  await file.close()
  t.equal((await new IndexFile({ dir }).load('sig')).status, 'loaded')
})

t.test('an unreadable or malformed file', async t => {
  const dir = tempDir(t)
  writeFileSync(path.join(dir, REFERENCE_INDEX_FILE), '{ not json')
  const bad = await new IndexFile({ dir }).load('sig')
  t.equal(bad.status, 'unreadable')
  writeFileSync(path.join(dir, REFERENCE_INDEX_FILE), JSON.stringify({ format: 'lectern-references', version: 1, referrers: 'x', deleted: [] }))
  t.equal((await new IndexFile({ dir }).load('sig')).status, 'unreadable')
})

t.test('nothing changed: no save', async t => {
  const dir = tempDir(t)
  const file = new IndexFile({ dir, debounceMs: 1 })
  await file.open(new ReverseIndex(), 'sig', false)
  await file.flush()
  t.equal(file.saves, 0)
  t.notOk(existsSync(path.join(dir, REFERENCE_INDEX_FILE)))
  file.setSignature('sig')
  await file.close()
  t.equal(file.saves, 0)
  const other = new IndexFile({ dir, debounceMs: 1 })
  await other.open(new ReverseIndex(), 'a', false)
  other.setSignature('b')
  await other.close()
  t.equal(other.saves, 1, 'a new signature is a change')
  t.equal(JSON.parse(readFileSync(path.join(dir, REFERENCE_INDEX_FILE), 'utf8')).signature, 'b')
})

t.test('a change after the final save puts the marker back: the next start rebuilds', async t => {
  const dir = tempDir(t)
  const file = new IndexFile({ dir, debounceMs: 1 })
  await file.open(new ReverseIndex(), 'sig', true)
  await file.close()
  t.notOk(existsSync(path.join(dir, OPEN_MARKER)))
  file.changed()
  t.ok(existsSync(path.join(dir, OPEN_MARKER)))
  t.equal((await new IndexFile({ dir }).load('sig')).status, 'unclean')
})
