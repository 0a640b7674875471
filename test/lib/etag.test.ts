import t from 'tap'
import { etagOf, ifNoneMatch } from '../../lib/etag.js'

t.test('etagOf is a quoted 16-digit lowercase hex hash of the UTF-8 bytes', async t => {
  const tag = etagOf('{"a":1}')
  t.match(tag, /^"[0-9a-f]{16}"$/)
  // XXH64 (seed 0) reference values.
  t.equal(etagOf(''), '"ef46db3751d8e999"')
  t.equal(etagOf('abc'), '"44bc2cf5ad770999"')
  t.equal(etagOf(Buffer.from('abc')), '"44bc2cf5ad770999"')
  t.equal(etagOf('{"a":1}'), tag, 'deterministic')
  t.not(etagOf('{"a":2}'), tag, 'another body, another tag')
  t.equal(etagOf('"é"'), etagOf(Buffer.from('"é"', 'utf8')), 'a string hashes as its UTF-8 bytes')
  t.not(etagOf('"é"'), etagOf(Buffer.from('"é"', 'latin1')))
  t.match(etagOf(''), /^"[0-9a-f]{16}"$/)
})

t.test('ifNoneMatch', async t => {
  const tag = '"0123456789abcdef"'
  t.equal(ifNoneMatch(undefined, tag), false, 'no header')
  t.equal(ifNoneMatch('', tag), false, 'empty header')
  t.equal(ifNoneMatch(tag, tag), true, 'the tag itself')
  t.equal(ifNoneMatch('0123456789abcdef', tag), true, 'quotes ignored')
  t.equal(ifNoneMatch(`W/${tag}`, tag), true, 'weak prefix ignored')
  t.equal(ifNoneMatch(`"aaaaaaaaaaaaaaaa", ${tag}`, tag), true, 'in a comma list')
  t.equal(ifNoneMatch(`"aaaaaaaaaaaaaaaa",W/${tag}`, tag), true, 'weak, in a list without spaces')
  t.equal(ifNoneMatch('*', tag), true, 'any')
  t.equal(ifNoneMatch('"aaaaaaaaaaaaaaaa"', tag), false, 'another tag')
  t.equal(ifNoneMatch('"0123456789ABCDEF"', tag), false, 'tags compare exactly')
  t.equal(ifNoneMatch('"0123456789abcde"', tag), false, 'a prefix is not a match')
  t.equal(ifNoneMatch(['"x"', tag], tag), true, 'a repeated header')
  t.equal(ifNoneMatch(' , ', tag), false, 'only separators')
})
