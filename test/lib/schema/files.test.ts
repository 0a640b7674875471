// Schema deletes are durable before they resolve (issue 28 item 11): the types directory is
// fsynced after the unlink and before the registry (and so the DELETE route) can answer.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { SchemaFiles } from '../../../lib/schema/files.js'

function tempDir (t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-schema-files-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

t.test('remove resolves only once the types directory is synced, after the unlink', async t => {
  const dir = tempDir(t)
  writeFileSync(path.join(dir, 'post.json'), '{}')
  writeFileSync(path.join(dir, 'post.json5'), '{}')
  const synced: Array<{ dir: string, filesLeft: boolean }> = []
  let release = (): void => {}
  const files = new SchemaFiles(dir, async synced_ => {
    synced.push({ dir: synced_, filesLeft: existsSync(path.join(dir, 'post.json')) || existsSync(path.join(dir, 'post.json5')) })
    await new Promise<void>(resolve => { release = resolve })
  })
  let done = false
  const removing = files.remove('post').then(removed => { done = true; return removed })
  while (synced.length === 0) await new Promise(resolve => setImmediate(resolve))
  t.strictSame(synced, [{ dir, filesLeft: false }], 'one sync of the directory, after both files are gone')
  await new Promise(resolve => setImmediate(resolve))
  t.equal(done, false, 'not resolved while the sync runs')
  release()
  t.equal(await removing, true)
})

t.test('a remove of a missing schema syncs nothing; the default sync is a real fsync', async t => {
  const dir = tempDir(t)
  let syncs = 0
  t.equal(await new SchemaFiles(dir, async () => { syncs++ }).remove('none'), false)
  t.equal(syncs, 0)
  writeFileSync(path.join(dir, 'page.json'), '{}')
  t.equal(await new SchemaFiles(dir).remove('page'), true)
  t.notOk(existsSync(path.join(dir, 'page.json')))
})

t.test('a failed sync fails the remove: no answer claims a delete that may not last', async t => {
  const dir = tempDir(t)
  writeFileSync(path.join(dir, 'post.json'), '{}')
  await t.rejects(new SchemaFiles(dir, async () => { throw Object.assign(new Error('I/O error'), { code: 'EIO' }) }).remove('post'), { code: 'EIO' })
})
