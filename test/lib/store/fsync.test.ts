// lib/store/fsync.ts: durable writes on the main thread's fs promises (used by the reference
// index file), and folder fsyncs shared between concurrent writers.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { DirSyncer, isTempFile, removeFileDurably, writeFileDurably } from '../../../lib/store/fsync.js'
import { tempDir } from '../../helper.js'

t.test('writeFileDurably and removeFileDurably', async t => {
  const dir = tempDir(t)
  const syncer = new DirSyncer(dir)
  await Promise.all(Array.from({ length: 20 }, (_, i) => writeFileDurably(dir, `f${i}.json`, `v${i}`, syncer)))
  await writeFileDurably(dir, 'f3.json', 'replaced', syncer)
  t.equal(readFileSync(path.join(dir, 'f3.json'), 'utf8'), 'replaced')
  t.equal(readdirSync(dir).length, 20, 'no temp file is left behind')
  t.equal(await removeFileDurably(dir, 'f3.json', syncer), true)
  t.equal(await removeFileDurably(dir, 'f3.json', syncer), false)
  await t.rejects(writeFileDurably(path.join(dir, 'missing'), 'x.json', 'x', syncer), { code: 'ENOENT' })
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

t.test('isTempFile', async t => {
  t.ok(isTempFile('.hello.json.123.4.tmp'))
  t.notOk(isTempFile('hello.json'))
  t.notOk(isTempFile('hello.tmp'), 'temp files are hidden')
})
