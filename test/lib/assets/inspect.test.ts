import { writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import sharp from 'sharp'
import { detectMime, imageSize, inspectFile, OCTET_STREAM } from '../../../lib/assets/inspect.js'
import { tempDir } from '../../helper.js'
import { jpeg, png, SVG } from './fixtures.js'

t.test('the content decides, the extension only for known text formats', async t => {
  const dir = tempDir(t)
  const cases: Array<[string, Buffer | string, string]> = [
    ['a.png', await png(4, 4), 'image/png'],
    ['a.jpg', await jpeg(4, 4), 'image/jpeg'],
    ['really-a-png.txt', await png(4, 4), 'image/png'],
    ['a.webp', await sharp(await png(4, 4)).webp().toBuffer(), 'image/webp'],
    ['a.gif', await sharp(await png(4, 4)).gif().toBuffer(), 'image/gif'],
    ['a.pdf', '%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n', 'application/pdf'],
    ['a.svg', SVG, 'image/svg+xml'],
    ['bare.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>', 'image/svg+xml'],
    ['bom.svg', '\uFEFF<svg xmlns="http://www.w3.org/2000/svg"></svg>', 'image/svg+xml'],
    ['not.svg', '<?xml version="1.0"?><html/>', OCTET_STREAM],
    ['feed.xml', '<?xml version="1.0"?><rss/>', 'application/xml'],
    ['a.txt', 'plain words\n', 'text/plain'],
    ['unicode.md', '# Überschrift – ✓\n', 'text/markdown'],
    ['a.csv', 'a,b\n1,2\n', 'text/csv'],
    ['a.json', '  [1, 2]', 'application/json'],
    ['not.json', 'hello', OCTET_STREAM],
    ['latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]), OCTET_STREAM],
    ['nul.txt', Buffer.from('a\0b'), OCTET_STREAM],
    ['page.html', '<!doctype html><script>alert(1)</script>', OCTET_STREAM],
    ['script.js', 'alert(1)', OCTET_STREAM],
    ['empty.txt', '', 'text/plain'],
    ['empty.png', '', OCTET_STREAM],
    ['noext', 'text without an extension', OCTET_STREAM]
  ]
  for (const [name, data, mime] of cases) {
    const file = path.join(dir, name)
    writeFileSync(file, data)
    t.equal(await detectMime(file, name), mime, name)
  }
})

t.test('image sizes are as displayed (EXIF orientation applied)', async t => {
  const dir = tempDir(t)
  const rotated = path.join(dir, 'rotated.jpg')
  writeFileSync(rotated, await sharp(await jpeg(40, 20)).withMetadata({ orientation: 6 }).jpeg().toBuffer())
  t.same(await inspectFile(rotated, 'rotated.jpg'), { mime: 'image/jpeg', width: 20, height: 40 })
  const svg = path.join(dir, 'a.svg')
  writeFileSync(svg, SVG)
  t.same(await imageSize(svg, 'image/svg+xml'), { width: 120, height: 80 })
  const truncated = path.join(dir, 'cut.png')
  writeFileSync(truncated, (await png(10, 10)).subarray(0, 20))
  t.same(await imageSize(truncated, 'image/png'), { width: null, height: null }, 'a corrupt image has no size')
  t.same(await imageSize(svg, 'text/plain'), { width: null, height: null }, 'only images are measured')
})
