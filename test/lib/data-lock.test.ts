import { spawn } from 'node:child_process'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../../lib/data-lock.js'
import { ROOT, TS_CHILD_ARGS, TS_CHILD_ENV, sourceUrl, tempDir } from '../helper.js'

t.test('a second lock on a held directory is refused until the first is released', async t => {
  const dir = tempDir(t)
  const first = lockDataDir(dir)
  t.throws(() => lockDataDir(dir), DataDirLockedError, 'the same process, a second time')
  const err = t.throws(() => lockDataDir(dir)) as Error
  t.match(err.message, `the data directory ${dir} is in use by another Lectern process (CMS_DATA_DIR)`)
  first.release()
  first.release()
  const second = lockDataDir(dir)
  t.teardown(() => { second.release() })
  t.strictSame(readdirSync(dir), [LOCK_FILE], 'one file, no journal beside it')
})

t.test('another process holds the lock until it ends, even when killed', async t => {
  const dir = tempDir(t)
  const script = `const { lockDataDir } = await import(${JSON.stringify(sourceUrl('lib', 'data-lock.ts'))})
lockDataDir(${JSON.stringify(dir)}); process.stdout.write('held\\n'); setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, [...TS_CHILD_ARGS, '--input-type=module', '--eval', script], { cwd: ROOT, env: TS_CHILD_ENV, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const exited = new Promise(resolve => child.once('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => { if (d.toString().includes('held')) resolve() })
    child.once('exit', code => { reject(new Error(`the child exited with ${String(code)}`)) })
  })
  t.throws(() => lockDataDir(dir), DataDirLockedError)
  // No clean-up of any kind runs on SIGKILL: the kernel drops the lock with the process.
  child.kill('SIGKILL')
  await exited
  const lock = lockDataDir(dir)
  lock.release()
  t.ok(existsSync(path.join(dir, LOCK_FILE)))
})

t.test('a directory that cannot hold the lock file is an error of its own, not "in use"', async t => {
  const missing = path.join(tempDir(t), 'no', 'such', 'dir')
  const err = t.throws(() => lockDataDir(missing)) as Error
  t.notOk(err instanceof DataDirLockedError)
})

t.test('a lectern.lock that is not a SQLite file: an error naming it, saying it holds no data', async t => {
  const dir = tempDir(t)
  writeFileSync(path.join(dir, LOCK_FILE), 'not a database, and long enough to be read as a header '.repeat(4))
  const err = t.throws(() => lockDataDir(dir)) as Error
  t.notOk(err instanceof DataDirLockedError)
  t.equal(err.message, `${path.join(dir, LOCK_FILE)} is not a lock file Lectern can use; it holds no data: remove it while no server runs on ${dir}`)
})
