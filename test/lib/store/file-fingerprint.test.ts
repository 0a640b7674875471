// The file store's content fingerprint: the same files give the same text; a file added, removed
// or rewritten gives another; files that are not entries do not count.
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { contentFingerprint } from '../../../lib/store/file-fingerprint.js'
import { tempDir } from '../../helper.js'

t.test('follows every entry file, and only them', async t => {
  const root = path.join(tempDir(t), 'content')
  const empty = contentFingerprint(root)
  t.match(empty, /^file:/, 'a missing folder has a fingerprint too')
  const dir = path.join(root, 'default', 'posts', '_')
  mkdirSync(dir, { recursive: true })
  const file = path.join(dir, 'a.json')
  writeFileSync(file, '{"data":{}}')
  const one = contentFingerprint(root)
  t.not(one, empty, 'a file added')
  t.equal(contentFingerprint(root), one, 'stable while nothing changes')
  writeFileSync(path.join(dir, '.a.json.1.tmp'), 'x')
  writeFileSync(path.join(dir, 'notes.txt'), 'x')
  writeFileSync(path.join(root, 'changes.log'), 'x')
  t.equal(contentFingerprint(root), one, 'temp files, other files and the change log do not count')
  writeFileSync(file, '{"data":{"a":1}}')
  const resized = contentFingerprint(root)
  t.not(resized, one, 'a file rewritten with another size')
  writeFileSync(file, '{"data":{"a":2}}')
  utimesSync(file, new Date('2030-01-01T00:00:00Z'), new Date('2030-01-01T00:00:00Z'))
  t.not(contentFingerprint(root), resized, 'the same size, another modification time')
  rmSync(file)
  t.equal(contentFingerprint(root), empty, 'removed: as before it was there (empty folders do not count)')
})
