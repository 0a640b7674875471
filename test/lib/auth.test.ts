import t from 'tap'
import { KeyRing, SessionSigner, can, presentedKey, seesDrafts, sessionCookie } from '../../lib/auth.js'

const admin = 'admin-key-0123456789'
const editor = 'editor-key-0123456789'
const viewer = 'viewer-key-0123456789'
const ring = new KeyRing([{ key: admin, role: 'admin' }, { key: editor, role: 'editor' }, { key: viewer, role: 'viewer' }])

t.test('the key is read from Authorization: Bearer or X-API-Key', async t => {
  t.equal(presentedKey(`Bearer ${admin}`, undefined), admin)
  t.equal(presentedKey(`bearer   ${admin} `, undefined), admin)
  t.equal(presentedKey(undefined, admin), admin)
  t.equal(presentedKey('Basic abc', undefined), null)
  t.equal(presentedKey('Basic abc', editor), editor, 'X-API-Key is used when Authorization is not a bearer')
  t.equal(presentedKey(undefined, '  '), null)
  t.equal(presentedKey(undefined, undefined), null)
})

t.test('roles and permissions (contract §3)', async t => {
  const a = ring.resolve(`Bearer ${admin}`, undefined)
  const e = ring.resolve(undefined, editor)
  const v = ring.resolve(`Bearer ${viewer}`, undefined)
  t.same([a.role, e.role, v.role], ['admin', 'editor', 'viewer'])
  for (const p of ['ContentWrite', 'SchemasWrite', 'AssetsWrite'] as const) t.ok(can(a, p), `admin ${p}`)
  t.ok(can(e, 'ContentWrite'))
  t.ok(can(e, 'AssetsWrite'))
  t.notOk(can(e, 'SchemasWrite'))
  for (const p of ['ContentWrite', 'SchemasWrite', 'AssetsWrite'] as const) t.notOk(can(v, p), `viewer lacks ${p}`)
  t.ok(seesDrafts(a) && seesDrafts(e) && seesDrafts(v), 'every role sees drafts')
})

t.test('missing and unknown keys are anonymous; unknown ones are flagged', async t => {
  const none = ring.resolve(undefined, undefined)
  t.same(none, { role: null, authenticated: false, invalidKey: false })
  t.notOk(seesDrafts(none))
  const wrong = ring.resolve('Bearer admin-key-0123456780', undefined)
  t.same(wrong, { role: null, authenticated: false, invalidKey: true })
  t.notOk(can(wrong, 'ContentWrite'))
  t.equal(ring.match(admin.slice(0, -1)), null, 'a prefix is not a match')
  t.equal(ring.match(admin + 'x'), null, 'an extension is not a match')
})

t.test('without keys everyone is an authenticated admin (interface.md Authentication rule 1)', async t => {
  const open = new KeyRing([])
  t.notOk(open.enabled)
  const c = open.resolve(undefined, undefined)
  t.ok(c.authenticated)
  t.ok(can(c, 'SchemasWrite'))
  t.ok(seesDrafts(c))
})

t.test('sessions: signed, expiring, bound to a configured key and to the secret', async t => {
  const secret = Buffer.alloc(32, 7)
  const ring = new KeyRing([{ key: 'editor-key-0123456789', role: 'editor' }])
  const keyId = ring.keyId('editor-key-0123456789', secret)
  t.type(keyId, 'string')
  t.equal(ring.keyId('unknown-key-0123456789', secret), null)
  const signer = new SessionSigner(secret)
  const now = Date.now()
  const token = signer.issue(keyId as string, Math.floor(now / 1000) + 60)
  t.same(signer.verify(token, now), { keyId, expiresAt: Math.floor(now / 1000) + 60 })
  t.equal(signer.verify(token, now + 61_000), null, 'expired')
  t.equal(new SessionSigner(Buffer.alloc(32, 8)).verify(token, now), null, 'another secret: signed out')
  t.equal(signer.verify(token.replace(/^[^.]+/, 'x'), now), null, 'tampered')
  t.equal(ring.roleOfKeyId(keyId as string, secret), 'editor')
  t.equal(new KeyRing([{ key: 'other-key-0123456789ab', role: 'admin' }]).roleOfKeyId(keyId as string, secret), null, 'a key removed from the configuration ends its sessions')
  const presented = (session: string | null, csrf?: string, unsafe = true) => ({ authorization: undefined, apiKey: undefined, session, csrf, unsafe })
  t.same(ring.resolveRequest(presented(token, signer.csrf(token)), signer, now), { role: 'editor', authenticated: true, invalidKey: false })
  t.match(ring.resolveRequest(presented(token), signer, now), { authenticated: false, refusal: /x-csrf-token/ })
  t.match(ring.resolveRequest(presented(token, undefined, false), signer, now), { role: 'editor' }, 'reads need no token')
  t.match(ring.resolveRequest(presented(token, signer.csrf(token)), signer, now + 61_000), { authenticated: false, refusal: /expired/ })
  t.match(ring.resolveRequest(presented(token), null, now), { authenticated: false, invalidKey: false })
  t.equal(sessionCookie(undefined), null)
  t.equal(sessionCookie('a=1; lectern_session=abc.def ; b=2'), 'abc.def')
  t.equal(sessionCookie('lectern_sessionx=1'), null)
})
