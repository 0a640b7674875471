// Another process's asset writes, as announced on the cluster bus (lib/assets/remote.ts).
import t from 'tap'
import { announcedAsset, RemoteAssets } from '../../../lib/assets/remote.js'
import type { AssetRoots } from '../../../lib/assets/paths.js'

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

t.test('RemoteAssets: each announcement in turn; a malformed one is logged and skipped; a failure is logged', async t => {
  const calls: string[] = []
  const warned: string[] = []
  const remote = new RemoteAssets({
    library: {
      roots: { names: ['default'] } as unknown as AssetRoots,
      forget: (environment, relative) => { calls.push(`forget ${environment}:${relative}`) },
      forgetAll: () => { calls.push('forget all') }
    },
    transforms: {
      invalidateAsset: async (environment, relative) => {
        await new Promise(resolve => setImmediate(resolve))
        if (relative === 'broken.png') throw new Error('disk gone')
        calls.push(`variants ${environment}:${relative}`)
        return 1
      }
    },
    log: { warn: (_obj, msg) => { warned.push(msg) } }
  })
  void remote.changed({ environment: 'default', path: '/api/assets/a/b.png' })
  void remote.changed({ environment: 'elsewhere', path: '/api/assets/c.png' })
  void remote.changed({ environment: 'default', path: '/api/assets/broken.png' })
  void remote.changed({ environment: 'default', path: '/api/assets/d.png' })
  await remote.settled()
  remote.forgetAll()
  t.strictSame(calls, ['forget default:a/b.png', 'variants default:a/b.png', 'forget default:broken.png', 'forget default:d.png', 'variants default:d.png', 'forget all'])
  t.strictSame(warned, ['ignored a malformed asset announcement', 'dropping the variants of an asset another process changed failed'])
})
