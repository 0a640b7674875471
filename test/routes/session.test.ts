// Admin sessions (routes/api/session, lib/auth.ts): a key exchanged for a signed, expiring,
// HttpOnly, SameSite=Strict cookie that counts as the key did; writes with it need the CSRF token.
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { SessionReply } from '../../routes/api/session/schemas.js'
import { ADMIN_KEY, EDITOR_KEY, KEYS_ENV, VIEWER_KEY, assertError, assertShape, auth, build, eachStore, type Env } from '../helper.js'

async function signIn (t: Test, app: FastifyInstance, key: string): Promise<{ cookie: string, csrf: string, res: LightMyRequestResponse }> {
  const res = await app.inject({ method: 'POST', url: '/api/session', payload: { key } })
  t.equal(res.statusCode, 200, 'signed in')
  assertShape(t, SessionReply, res.json())
  const header = String(res.headers['set-cookie'])
  const cookie = /^lectern_session=([^;]+);/.exec(header)?.[1] ?? ''
  return { cookie: `lectern_session=${cookie}`, csrf: res.json().csrf, res }
}

const category = (slug: string, status = 'published'): Record<string, unknown> => ({ _slug: slug, name: slug, _status: status })

eachStore(t, async (t, store, storeEnv) => {
  const env: Env = { ...storeEnv, ...KEYS_ENV, CMS_SEED: 'true' }

  t.test('sign in: a cookie with the expected attributes; the key is not in it', async t => {
    const app = await build(t, { ...env, CMS_SESSION_HOURS: '2' })
    const { res, cookie, csrf } = await signIn(t, app, EDITOR_KEY)
    const header = String(res.headers['set-cookie'])
    t.match(header, /; Path=\/; HttpOnly; SameSite=Strict; Max-Age=7200$/, 'HttpOnly, SameSite=Strict, two hours; not Secure over plain HTTP')
    t.notMatch(header, EDITOR_KEY, 'the cookie does not carry the key')
    const body = res.json()
    t.equal(body.role, 'editor')
    t.equal(body.session, true)
    t.ok(Math.abs(Date.parse(body.expires_at) - Date.now() - 7_200_000) < 60_000, 'expires in two hours')
    const me = await app.inject({ method: 'GET', url: '/api/session', headers: { cookie } })
    assertShape(t, SessionReply, me.json())
    t.strictSame(me.json(), { role: 'editor', keys: true, session: true, csrf, expires_at: body.expires_at, preview_url: null }, 'another tab learns its role and CSRF token from the cookie')
    const https = await app.inject({ method: 'POST', url: '/api/session', payload: { key: EDITOR_KEY }, headers: { 'x-forwarded-proto': 'https' } })
    t.equal(https.statusCode, 200)
  })

  t.test('the cookie counts as the key: drafts on reads, writes with the CSRF token', async t => {
    const app = await build(t, env)
    t.equal((await app.inject({ method: 'POST', url: '/api/content/category', headers: auth(ADMIN_KEY), payload: category('hidden', 'draft') })).statusCode, 201)
    const { cookie, csrf } = await signIn(t, app, EDITOR_KEY)
    t.equal((await app.inject({ method: 'GET', url: '/api/content/category/hidden' })).statusCode, 404, 'anonymous: no draft')
    t.equal((await app.inject({ method: 'GET', url: '/api/content/category/hidden', headers: { cookie } })).statusCode, 200, 'the session sees drafts')
    const bare = await app.inject({ method: 'POST', url: '/api/content/category', headers: { cookie }, payload: category('a') })
    assertError(t, bare, 401, 'UNAUTHORIZED')
    t.match(bare.json().message, /X-CSRF-Token|x-csrf-token/, 'says what is missing')
    const wrong = await app.inject({ method: 'POST', url: '/api/content/category', headers: { cookie, 'x-csrf-token': csrf.slice(1) + 'x' }, payload: category('a') })
    assertError(t, wrong, 401, 'UNAUTHORIZED')
    const ok = await app.inject({ method: 'POST', url: '/api/content/category', headers: { cookie, 'x-csrf-token': csrf }, payload: category('a') })
    t.equal(ok.statusCode, 201, 'a write with the token is made')
    const schemas = await app.inject({ method: 'PUT', url: '/api/schemas/thing', headers: { cookie, 'x-csrf-token': csrf }, payload: { name: 'thing', fields: {} } })
    assertError(t, schemas, 403, 'FORBIDDEN')
    const other = await signIn(t, app, EDITOR_KEY)
    const crossed = await app.inject({ method: 'DELETE', url: '/api/content/category/a', headers: { cookie, 'x-csrf-token': other.csrf } })
    assertError(t, crossed, 401, 'UNAUTHORIZED')
  })

  t.test('a key header wins over the cookie; a forged or tampered cookie is anonymous', async t => {
    const app = await build(t, env)
    const { cookie } = await signIn(t, app, VIEWER_KEY)
    const withKey = await app.inject({ method: 'GET', url: '/api/session', headers: { cookie, ...auth(ADMIN_KEY) } })
    t.equal(withKey.json().role, 'admin')
    t.equal(withKey.json().session, false)
    t.equal(withKey.json().csrf, null)
    const value = cookie.slice('lectern_session='.length)
    const parts = value.split('.')
    for (const forged of [
      `${parts[0] ?? ''}.${Number(parts[1]) + 3600}.${parts[2] ?? ''}.${parts[3] ?? ''}`,
      value.slice(0, -2) + 'AA',
      'nonsense',
      ''
    ]) {
      const res = await app.inject({ method: 'GET', url: '/api/session', headers: { cookie: `other=1; lectern_session=${forged}` } })
      t.strictSame({ role: res.json().role, session: res.json().session }, { role: null, session: false }, 'forged: anonymous')
    }
    const write = await app.inject({ method: 'POST', url: '/api/content/category', headers: { cookie: 'lectern_session=nonsense', 'x-csrf-token': 'x' }, payload: category('b') })
    assertError(t, write, 401, 'UNAUTHORIZED')
    t.match(write.json().message, /expired or was signed out/)
  })

  t.test('a key that is not configured: 401; an empty body: 400', async t => {
    const app = await build(t, env)
    const res = await app.inject({ method: 'POST', url: '/api/session', payload: { key: 'not-a-configured-key-at-all' } })
    assertError(t, res, 401, 'UNAUTHORIZED')
    t.equal(res.headers['set-cookie'], undefined)
    assertError(t, await app.inject({ method: 'POST', url: '/api/session', payload: {} }), 400, 'BAD_REQUEST')
  })

  t.test('sign out clears the cookie; sign out everywhere ends every session', async t => {
    const app = await build(t, env)
    const out = await app.inject({ method: 'DELETE', url: '/api/session' })
    t.equal(out.statusCode, 204)
    t.match(String(out.headers['set-cookie']), /^lectern_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/)
    const editor = await signIn(t, app, EDITOR_KEY)
    const admin = await signIn(t, app, ADMIN_KEY)
    assertError(t, await app.inject({ method: 'POST', url: '/api/session/revoke', headers: { cookie: editor.cookie, 'x-csrf-token': editor.csrf } }), 403, 'FORBIDDEN')
    assertError(t, await app.inject({ method: 'POST', url: '/api/session/revoke', headers: { cookie: admin.cookie } }), 401, 'UNAUTHORIZED')
    const revoke = await app.inject({ method: 'POST', url: '/api/session/revoke', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf } })
    t.equal(revoke.statusCode, 204)
    for (const s of [editor, admin]) {
      t.equal((await app.inject({ method: 'GET', url: '/api/session', headers: { cookie: s.cookie } })).json().role, null, 'signed out')
    }
    t.equal((await app.inject({ method: 'GET', url: '/api/session', headers: auth(EDITOR_KEY) })).json().role, 'editor', 'keys still work')
    const again = await signIn(t, app, EDITOR_KEY)
    t.equal((await app.inject({ method: 'GET', url: '/api/session', headers: { cookie: again.cookie } })).json().role, 'editor', 'a new sign-in works')
  })

  t.test('PostgreSQL: every replica accepts a session; sign out everywhere reaches them all', { skip: store !== 'postgres' && 'only PostgreSQL is shared by processes' }, async t => {
    const first = await build(t, env)
    // Another process: its own data dir, the same database schema.
    const other = await build(t, { ...env, CMS_DATABASE_URL: first.config.databaseUrl ?? '', CMS_TYPES_DIR: first.config.typesDir })
    t.not(other.config.dataDir, first.config.dataDir)
    const admin = await signIn(t, first, ADMIN_KEY)
    const me = await other.inject({ method: 'GET', url: '/api/session', headers: { cookie: admin.cookie } })
    t.equal(me.json().role, 'admin', 'a cookie of one replica counts on the other')
    t.equal(me.json().csrf, admin.csrf, 'with the same CSRF token')
    t.equal((await other.inject({ method: 'POST', url: '/api/session/revoke', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf } })).statusCode, 204)
    // The first replica hears of it through the database (within about a second): poll.
    const deadline = Date.now() + 10_000
    let role: unknown = 'admin'
    while (role !== null && Date.now() < deadline) {
      role = (await first.inject({ method: 'GET', url: '/api/session', headers: { cookie: admin.cookie } })).json().role
      if (role !== null) await new Promise(resolve => setTimeout(resolve, 50))
    }
    t.equal(role, null, 'signed out on the replica that did not rotate')
  })

  t.test('the secret survives a restart: a session outlives it', async t => {
    const first = await build(t, env, { keepOpen: true })
    const { cookie } = await signIn(t, first, EDITOR_KEY)
    const dataDir = first.config.dataDir
    await first.close()
    const second = await build(t, env, { dataDir })
    t.equal((await second.inject({ method: 'GET', url: '/api/session', headers: { cookie } })).json().role, 'editor')
  })
})

t.test('without keys: everyone is admin, no cookie; the preview URL is told', async t => {
  const app = await build(t, { CMS_PREVIEW_URL: 'https://site.example/preview/{collection}/{slug}?l={locale}' })
  const res = await app.inject({ method: 'POST', url: '/api/session', payload: { key: 'anything-at-all-here' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['set-cookie'], undefined)
  t.strictSame(res.json(), { keys: false, preview_url: 'https://site.example/preview/{collection}/{slug}?l={locale}', role: 'admin', session: false, csrf: null, expires_at: null })
  const me = await app.inject({ method: 'GET', url: '/api/session' })
  assertShape(t, SessionReply, me.json())
  t.equal(me.json().role, 'admin')
  t.equal((await app.inject({ method: 'POST', url: '/api/session/revoke' })).statusCode, 204)
})
