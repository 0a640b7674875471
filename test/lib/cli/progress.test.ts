import t from 'tap'
import { Progress } from '../../../lib/cli/progress.js'

t.test('progress: on a terminal only, at most every 100 ms, cleared at the end', async t => {
  let now = 1000
  const written: string[] = []
  const p = new Progress({ isTTY: true, write: s => written.push(s) }, () => now)
  p.update('a')
  now += 50
  p.update('b')
  now += 100
  p.update('c')
  p.done()
  p.done()
  t.same(written, ['\r\u001b[2Ka', '\r\u001b[2Kc', '\r\u001b[2K'])
  const quiet: string[] = []
  const q = new Progress({ write: s => quiet.push(s) })
  q.update('x')
  q.done()
  t.same(quiet, [], 'nothing when not a terminal')
})
