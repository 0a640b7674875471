// lib/durable.ts: atomic, durable writes and removals, and folder fsyncs shared between
// concurrent writers.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { DirSyncer, isTempFile, removeFileDurably, tempPathFor, writeFileAtomic } from '../../lib/durable.js'
import { tempDir } from '../helper.js'

t.test('writeFileAtomic and removeFileDurably, with a shared folder syncer and without', async t => {
  const dir = tempDir(t)
  const syncer = new DirSyncer(dir)
  const file = (name: string): string => path.join(dir, name)
  await Promise.all(Array.from({ length: 20 }, async (_, i) => { await writeFileAtomic(file(`f${i}.json`), `v${i}`, syncer) }))
  await writeFileAtomic(file('f3.json'), 'replaced', syncer)
  t.equal(readFileSync(file('f3.json'), 'utf8'), 'replaced')
  await writeFileAtomic(file('bytes.bin'), new Uint8Array([1, 2, 3]))
  t.same([...readFileSync(file('bytes.bin'))], [1, 2, 3], 'bytes too, with a folder fsync of its own')
  t.equal(readdirSync(dir).length, 21, 'no temp file is left behind')
  t.equal(await removeFileDurably(file('f3.json'), syncer), true)
  t.equal(await removeFileDurably(file('f3.json'), syncer), false)
  t.equal(await removeFileDurably(file('bytes.bin')), true)
  await t.rejects(writeFileAtomic(path.join(dir, 'missing', 'x.json'), 'x', syncer), { code: 'ENOENT' })
  t.equal(readdirSync(dir).length, 19, 'a failed write leaves nothing behind')
})

t.test('concurrent writers of one file: the result is one of them, whole', async t => {
  const target = path.join(tempDir(t), 'one.json')
  await Promise.all(Array.from({ length: 20 }, async (_, i) => { await writeFileAtomic(target, `{"n":${i}}`) }))
  t.match(readFileSync(target, 'utf8'), /^\{"n":\d+\}$/)
  t.same(readdirSync(path.dirname(target)), ['one.json'])
})

t.test('DirSyncer: a caller joins a sync that has not started, never one already running', async t => {
  const syncer = new DirSyncer(tempDir(t))
  const first = syncer.sync()
  const second = syncer.sync()
  const third = syncer.sync()
  t.not(first, second, 'a sync already running may predate the second caller: it gets the next one')
  t.equal(second, third, 'callers waiting for the next sync share it')
  await Promise.all([first, second, third])
  await t.rejects(new DirSyncer(path.join(tempDir(t), 'gone')).sync(), { code: 'ENOENT' })
})

t.test('isTempFile and tempPathFor', async t => {
  t.ok(isTempFile('.hello.json.123.4.tmp'))
  t.ok(isTempFile(path.basename(tempPathFor('/x', 'hello.json'))), 'what tempPathFor makes is a temp file')
  t.not(tempPathFor('/x'), tempPathFor('/x'), 'never the same twice')
  t.equal(path.dirname(tempPathFor('/x/y', 'upload')), '/x/y', 'beside its target')
  t.notOk(isTempFile('hello.json'))
  t.notOk(isTempFile('hello.tmp'), 'temp files are hidden')
})
