import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { CmsError } from '../../../lib/errors.js'
import {
  AssetRoots, isInside, normalizeFolder, parseAssetPath, parseAssetRecordPath, realInside, splitAssetPath
} from '../../../lib/assets/paths.js'
import { tempDir } from '../../helper.js'

function badRequest (t: Test, fn: () => unknown, what: string): void {
  try {
    fn()
    t.fail(`${what}: expected a BAD_REQUEST`)
  } catch (err) {
    t.ok(err instanceof CmsError && err.code === 'BAD_REQUEST', `${what}: BAD_REQUEST`)
  }
}

t.test('parseAssetPath accepts canonical relative paths', async t => {
  t.equal(parseAssetPath('a.png'), 'a.png')
  t.equal(parseAssetPath('photos/2024/a.png'), 'photos/2024/a.png')
  t.equal(parseAssetPath('my..photo.png'), 'my..photo.png', '.. inside a name is not a segment')
  t.equal(parseAssetPath('100%.txt'), '100%.txt', 'a lone % is not an escape')
})

t.test('parseAssetPath refuses traversal in every form', async t => {
  for (const raw of [
    '', '..', '../a', 'a/..', 'a/../b', './a', 'a/./b', 'a//b', '/a', '//a', 'a\\b', '\\a', 'a\0b', 'C:/a', 'c:\\a', '~/a',
    '%2e%2e/a', '%2E%2E', 'a/%2e%2e', '%2e%2e%2fa', '%252e%252e/a', '%25252e%25252e/a', 'a%5cb', 'a%255cb', 'a%00b', '%2fa',
    'a\x01b', 'x'.repeat(501)
  ]) {
    badRequest(t, () => parseAssetPath(raw), JSON.stringify(raw))
  }
})

t.test('parseAssetRecordPath wants the /api/assets/ prefix', async t => {
  t.equal(parseAssetRecordPath('/api/assets/a/b.png'), 'a/b.png')
  badRequest(t, () => parseAssetRecordPath('a/b.png'), 'no prefix')
  badRequest(t, () => parseAssetRecordPath('/api/assets/'), 'nothing after the prefix')
  badRequest(t, () => parseAssetRecordPath('/api/assets/../x'), 'traversal after the prefix')
})

t.test('normalizeFolder normalizes each segment like a slug', async t => {
  t.equal(normalizeFolder(''), '')
  t.equal(normalizeFolder('  '), '')
  t.equal(normalizeFolder('Photos'), 'photos')
  t.equal(normalizeFolder('Photos/Summer 2024/'), 'photos/summer-2024')
  t.equal(normalizeFolder('Café_Menus/Über'), 'cafe-menus/uber')
  t.equal(normalizeFolder('a.b/c'), 'a-b/c', 'dots are not kept in folders')
  for (const raw of ['..', '../a', 'a/../b', '/a', 'a//b', 'a\\b', 'a\0b', '%2e%2e', '!!!', 'a/!!!/b', 'C:/a', Array.from({ length: 9 }, () => 'a').join('/'), 'x'.repeat(201)]) {
    badRequest(t, () => normalizeFolder(raw), JSON.stringify(raw))
  }
})

t.test('splitAssetPath', async t => {
  t.same(splitAssetPath('a.png'), { folder: '', name: 'a.png' })
  t.same(splitAssetPath('x/y/a.png'), { folder: 'x/y', name: 'a.png' })
})

t.test('isInside', async t => {
  t.ok(isInside('/data/assets', '/data/assets/a.png'))
  t.ok(isInside('/data/assets', '/data/assets'))
  t.notOk(isInside('/data/assets', '/data/assets-other/a.png'), 'a sibling with the same prefix is outside')
  t.notOk(isInside('/data/assets', '/data/a.png'))
  t.ok(isInside('/data/assets', '/data/assets/..a'), 'a name starting with .. is inside')
})

t.test('AssetRoots: one directory per environment when they are on', async t => {
  const off = new AssetRoots('/data/assets', [])
  t.same(off.names, ['default'])
  t.equal(off.dir('default'), '/data/assets')
  t.equal(off.lexical('default', 'a/b.png'), '/data/assets/a/b.png')
  badRequest(t, () => off.lexical('default', '../x'), 'lexical escape')
  const on = new AssetRoots('/data/assets', ['live', 'draft'])
  t.same(on.names, ['live', 'draft'])
  t.equal(on.dir('draft'), '/data/assets/draft')
  t.throws(() => on.dir('other'), /unknown environment/)
})

t.test('realInside follows links and refuses those leading out', async t => {
  const base = tempDir(t)
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  mkdirSync(path.join(root, 'sub'), { recursive: true })
  mkdirSync(outside)
  writeFileSync(path.join(root, 'sub', 'a.txt'), 'a')
  writeFileSync(path.join(outside, 'b.txt'), 'b')
  symlinkSync(path.join(root, 'sub', 'a.txt'), path.join(root, 'inner-link.txt'))
  symlinkSync(path.join(outside, 'b.txt'), path.join(root, 'outer-link.txt'))
  symlinkSync(outside, path.join(root, 'outer-dir'))
  t.same(await realInside(root, path.join(root, 'sub', 'a.txt')), { root, file: path.join(root, 'sub', 'a.txt') })
  t.same(await realInside(root, path.join(root, 'inner-link.txt')), { root, file: path.join(root, 'sub', 'a.txt') }, 'a link inside is fine')
  t.equal(await realInside(root, path.join(root, 'outer-link.txt')), null)
  t.equal(await realInside(root, path.join(root, 'outer-dir', 'b.txt')), null)
  t.equal(await realInside(root, path.join(root, 'missing.txt')), null)
  t.equal(await realInside(root, root), null, 'the root itself is not a file inside it')
})
