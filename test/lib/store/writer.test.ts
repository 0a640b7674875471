// The file store's writer threads (lib/store/writer.ts).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { FileWriter } from '../../../lib/store/writer.js'
import { tempDir } from '../../helper.js'

t.test('writes, replaces and removes files durably', async t => {
  const dir = tempDir(t)
  const writer = new FileWriter(2)
  t.teardown(() => writer.close())
  await writer.write(dir, 'a.json', 'first')
  t.equal(readFileSync(path.join(dir, 'a.json'), 'utf8'), 'first')
  await writer.write(dir, 'a.json', 'second ünïcode 😀')
  t.equal(readFileSync(path.join(dir, 'a.json'), 'utf8'), 'second ünïcode 😀')
  t.equal(await writer.remove(dir, 'a.json'), true)
  t.equal(await writer.remove(dir, 'a.json'), false, 'nothing left to remove')
  t.same(readdirSync(dir), [], 'no temp file is left behind')
})

t.test('many concurrent jobs across the threads', async t => {
  const dir = tempDir(t)
  const writer = new FileWriter(3)
  t.teardown(() => writer.close())
  const big = 'x'.repeat(200_000)
  await Promise.all(Array.from({ length: 60 }, (_, i) => writer.write(dir, `f${i}.json`, i === 7 ? big : String(i))))
  t.equal(readdirSync(dir).length, 60)
  t.equal(readFileSync(path.join(dir, 'f7.json'), 'utf8').length, 200_000, 'a large file is written whole')
  t.equal(readFileSync(path.join(dir, 'f42.json'), 'utf8'), '42')
})

t.test('a failing job rejects alone, with its error code', async t => {
  const dir = tempDir(t)
  const writer = new FileWriter(1)
  t.teardown(() => writer.close())
  const missing = path.join(dir, 'gone')
  const outcomes = await Promise.allSettled([writer.write(dir, 'ok.json', 'ok'), writer.write(missing, 'x.json', 'x'), writer.write(dir, 'ok2.json', 'ok')])
  t.same(outcomes.map(o => o.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.equal(((outcomes[1] as PromiseRejectedResult).reason as { code?: string }).code, 'ENOENT')
  mkdirSync(path.join(dir, 'sub.json'))
  await t.rejects(writer.write(dir, 'sub.json', 'x'), { code: 'EISDIR' }, 'renaming over a folder fails')
  t.same(readdirSync(dir).sort(), ['ok.json', 'ok2.json', 'sub.json'], 'the failed writes left no temp file')
})

t.test('close waits for outstanding jobs; a closed writer refuses work', async t => {
  const dir = tempDir(t)
  const writer = new FileWriter(2)
  const writes = Array.from({ length: 20 }, (_, i) => writer.write(dir, `f${i}.json`, 'x'))
  await writer.close()
  await Promise.all(writes)
  t.equal(readdirSync(dir).length, 20)
  await t.rejects(writer.write(dir, 'late.json', 'x'), /closed/)
  rmSync(dir, { recursive: true, force: true })
  t.notOk(existsSync(dir))
})
