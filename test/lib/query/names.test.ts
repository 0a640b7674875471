// The "did you mean" of query names (contract §4).
import t from 'tap'
import { closestName, editDistance } from '../../../lib/query/names.js'

t.test('edit distance counts a swap of neighbours as one edit', async t => {
  t.equal(editDistance('', ''), 0)
  t.equal(editDistance('abc', ''), 3)
  t.equal(editDistance('', 'ab'), 2)
  t.equal(editDistance('titel', 'title'), 1)
  t.equal(editDistance('per_page', '_per_page'), 1)
  t.equal(editDistance('kitten', 'sitting'), 3)
})

t.test('closest name: likely typos only', async t => {
  const known = ['title', 'author', '_per_page', '_page', '_sort']
  t.equal(closestName('per_page', known), '_per_page')
  t.equal(closestName('titel', known), 'title')
  t.equal(closestName('AUTHER', known), 'author', 'case is ignored when measuring')
  t.equal(closestName('sort', known), '_sort')
  t.equal(closestName('zzzzzz', known), null, 'nothing close')
  t.equal(closestName('title', ['title']), null, 'the name itself is no suggestion')
  t.equal(closestName('ab', ['ax', 'ay']), 'ax', 'ties go to the first')
})
