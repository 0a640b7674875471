// Another process's asset writes, as announced on the cluster bus (lib/assets/remote.ts).
import t from 'tap'
import { announcedAsset, forgetRemoteAsset } from '../../../lib/assets/remote.js'

t.test('announcedAsset: a configured environment and a safe record path, else null', async t => {
  const environments = ['default', 'draft']
  t.strictSame(announcedAsset({ environment: 'draft', path: '/api/assets/photos/cat.png' }, environments), { environment: 'draft', relative: 'photos/cat.png' })
  for (const data of [
    {},
    { environment: 'default' },
    { environment: 'elsewhere', path: '/api/assets/a.png' },
    { environment: '../..', path: '/api/assets/a.png' },
    { environment: 'default', path: 'a.png' },
    { environment: 'default', path: '/api/assets/../secret' },
    { environment: 'default', path: '/api/assets/' },
    { environment: 'default', path: 42 }
  ]) {
    t.equal(announcedAsset(data, environments), null, JSON.stringify(data))
  }
})

t.test('forgetRemoteAsset: the remembered location and the variants of that asset go', async t => {
  const calls: string[] = []
  await forgetRemoteAsset(
    { forget: (environment, relative) => { calls.push(`forget ${environment}:${relative}`) } },
    { invalidateAsset: async (environment, relative) => { calls.push(`variants ${environment}:${relative}`); return 2 } },
    { environment: 'default', relative: 'a/b.png' })
  t.strictSame(calls, ['forget default:a/b.png', 'variants default:a/b.png'])
})
