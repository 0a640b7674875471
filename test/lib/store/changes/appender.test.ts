import { readFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import path from 'node:path'
import t, { type Test } from 'tap'
import { GroupAppender, type AppendTarget } from '../../../../lib/store/changes/appender.js'
import { tempDir } from '../../../helper.js'

/** A real file handle whose calls can be made to fail, one kind at a time. */
async function target (t: Test, file: string): Promise<AppendTarget & { failNext: Set<'write' | 'datasync' | 'truncate'> }> {
  const handle = await open(file, 'w+')
  t.teardown(async () => { await handle.close().catch(() => {}) })
  const failNext = new Set<'write' | 'datasync' | 'truncate'>()
  const maybeFail = (call: 'write' | 'datasync' | 'truncate'): void => {
    if (failNext.delete(call)) throw Object.assign(new Error(`${call} failed`), { code: 'EIO' })
  }
  return {
    failNext,
    write: (async (...args: Parameters<typeof handle.write>) => { maybeFail('write'); return await handle.write(...args) }) as typeof handle.write,
    datasync: async () => { maybeFail('datasync'); await handle.datasync() },
    truncate: async (len?: number) => { maybeFail('truncate'); await handle.truncate(len) },
    close: async () => { await handle.close() }
  }
}

t.test('appends in flight together share one write and one fdatasync, in order', async t => {
  const file = path.join(tempDir(t), 'log')
  const appender = new GroupAppender(await target(t, file), 0)
  await appender.append('first\n')
  t.equal(appender.commits, 1)
  const lines = Array.from({ length: 200 }, (_, i) => `line ${i}\n`)
  await Promise.all(lines.map(line => appender.append(line)))
  t.ok(appender.commits <= 3, `200 appends in ${appender.commits - 1} commits`)
  t.equal(readFileSync(file, 'utf8'), 'first\n' + lines.join(''))
  t.equal(appender.bytes, Buffer.byteLength('first\n' + lines.join('')))
})

t.test('a batch that fails is cut off the file, and later appends go on', async t => {
  const file = path.join(tempDir(t), 'log')
  const handle = await target(t, file)
  const appender = new GroupAppender(handle, 0)
  await appender.append('a\n')
  handle.failNext.add('datasync')
  const failed = appender.append('lost\n')
  await t.rejects(failed, /datasync failed/)
  t.equal(readFileSync(file, 'utf8'), 'a\n', 'the failed text is gone from the file')
  await appender.append('b\n')
  t.equal(readFileSync(file, 'utf8'), 'a\nb\n')
  handle.failNext.add('write')
  await t.rejects(appender.append('lost again\n'), /write failed/)
  await appender.append('c\n')
  t.equal(readFileSync(file, 'utf8'), 'a\nb\nc\n')
})

t.test('when a failed batch cannot be cut off, every later append fails', async t => {
  const file = path.join(tempDir(t), 'log')
  const handle = await target(t, file)
  const appender = new GroupAppender(handle, 0)
  handle.failNext.add('datasync').add('truncate')
  await t.rejects(appender.append('x\n'), /datasync failed/)
  await t.rejects(appender.append('y\n'), /cannot be appended to: a failed write could not be undone \(datasync failed\)/)
})

t.test('an exclusive task runs between batches and may swap the file', async t => {
  const dir = tempDir(t)
  const first = await target(t, path.join(dir, 'one'))
  const second = await target(t, path.join(dir, 'two'))
  const appender = new GroupAppender(first, 0)
  const order: string[] = []
  const a = appender.append('a\n').then(() => order.push('a'))
  const swapped = appender.exclusive(async () => {
    order.push('task')
    t.equal(appender.replace(second, 0), first, 'replace gives back the file left')
    return 'done'
  })
  const b = appender.append('b\n').then(() => order.push('b'))
  t.equal(await swapped, 'done')
  await Promise.all([a, b])
  t.strictSame(order, ['a', 'task', 'b'])
  t.equal(readFileSync(path.join(dir, 'one'), 'utf8'), 'a\n')
  t.equal(readFileSync(path.join(dir, 'two'), 'utf8'), 'b\n')
  await t.rejects(appender.exclusive(async () => { throw new Error('task failed') }), /task failed/)
  await appender.append('c\n')
  appender.fail(new Error('in doubt'))
  await t.rejects(appender.append('d\n'), /in doubt/)
})

t.test('close waits for appends under way', async t => {
  const file = path.join(tempDir(t), 'log')
  const appender = new GroupAppender(await target(t, file), 0)
  const pending = Array.from({ length: 20 }, (_, i) => appender.append(`${i}\n`))
  await appender.close()
  await Promise.all(pending)
  t.equal(readFileSync(file, 'utf8').split('\n').length, 21)
  await t.rejects(appender.append('late\n'), /closed/)
})
