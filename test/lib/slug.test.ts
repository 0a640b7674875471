import t from 'tap'
import { SLUG_ERRORS, checkSlug, normalizeFileName, normalizeSlug } from '../../lib/slug.js'

t.test('normalization (contract §4)', async t => {
  t.equal(normalizeSlug('  Hello World  '), 'hello-world')
  t.equal(normalizeSlug('Crème Brûlée'), 'creme-brulee')
  t.equal(normalizeSlug('a__b  c'), 'a-b-c')
  t.equal(normalizeSlug('--a---b--'), 'a-b')
  t.equal(normalizeSlug('ÅNGSTRÖM_2024'), 'angstrom-2024')
  t.equal(normalizeSlug('ﬁne'), 'fine', 'NFKD folds compatibility ligatures')
})

t.test('validation', async t => {
  t.same(checkSlug('Hello World'), { valid: true, normalized: 'hello-world', error: null })
  t.same(checkSlug(''), { valid: false, normalized: '', error: SLUG_ERRORS.empty })
  t.same(checkSlug('   '), { valid: false, normalized: '', error: SLUG_ERRORS.empty })
  t.equal(checkSlug(42).error, SLUG_ERRORS.empty)
  for (const s of ['a/b', 'a\\b', '..', 'a..b', '../etc/passwd']) {
    t.equal(checkSlug(s).error, SLUG_ERRORS.path, `path characters rejected: ${s}`)
  }
  t.equal(checkSlug('hello!').error, SLUG_ERRORS.invalid)
  t.equal(checkSlug('日本語').error, SLUG_ERRORS.invalid)
  t.equal(checkSlug('---').error, SLUG_ERRORS.invalid)
  t.ok(checkSlug('a'.repeat(200)).valid)
  t.equal(checkSlug('a'.repeat(201)).error, SLUG_ERRORS.tooLong)
})

t.test('file names keep their extension', async t => {
  t.equal(normalizeFileName('My Photo.JPG'), 'my-photo.jpg')
  t.equal(normalizeFileName('../../etc/passwd'), 'passwd')
  t.equal(normalizeFileName('C:\\x\\Résumé (final).pdf'), 'resume-final.pdf')
  t.equal(normalizeFileName('archive.tar.gz'), 'archive-tar.gz')
  t.equal(normalizeFileName('.env'), 'env')
  t.equal(normalizeFileName('!!!.png'), null)
})
