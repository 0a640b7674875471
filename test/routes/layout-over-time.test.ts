// Contract §14 at the API: restarts that turn CMS_LOCALES and CMS_ENVIRONMENTS on and off never
// hide or lose content, with entries in every state (published, draft, with versions, with a
// pending draft, with a schedule), and every rule (slug check, 409, unique, references, the change
// feed) sees the content where it now belongs. On every store.
import t, { type Test } from 'tap'
import path from 'node:path'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { build, eachStore, tempDir, type Env } from '../helper.js'
import { writeSchemas } from '../fixtures/content-schemas.js'

type App = FastifyInstance
const call = async (app: App, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: Record<string, unknown>): Promise<LightMyRequestResponse> =>
  await app.inject({ method, url, ...(payload === undefined ? {} : { payload }) })

/** Every sync item from the start (initial=true) of one scope: slug → op. */
async function synced (app: App, query = ''): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  let url = `/api/sync?initial=true&collections=posts${query}`
  for (;;) {
    const res = await call(app, 'GET', url)
    const body = res.json() as { items: Array<{ op: string, slug: string }>, cursor: string, more: boolean }
    for (const item of body.items) out.set(item.slug, item.op)
    if (!body.more) return out
    url = `/api/sync?cursor=${encodeURIComponent(body.cursor)}`
  }
}

/** What a sync client that kept its cursor learns after the restart: slug → op. */
async function since (app: App, cursor: string): Promise<{ items: Map<string, string>, status: number }> {
  const res = await call(app, 'GET', `/api/sync?cursor=${encodeURIComponent(cursor)}`)
  const items = new Map<string, string>()
  if (res.statusCode === 200) for (const item of (res.json() as { items: Array<{ op: string, slug: string }> }).items) items.set(item.slug, item.op)
  return { items, status: res.statusCode }
}

async function lastCursor (app: App, query = ''): Promise<string> {
  let url = `/api/sync?initial=true&collections=posts${query}`
  for (;;) {
    const body = (await call(app, 'GET', url)).json() as { cursor: string, more: boolean }
    if (!body.more) return body.cursor
    url = `/api/sync?cursor=${encodeURIComponent(body.cursor)}`
  }
}

/** Entries in every state, written with the app's current settings (no _locale, no _environment). */
async function writeEveryState (t: Test, app: App): Promise<void> {
  t.equal((await call(app, 'POST', '/api/content/authors', { _slug: 'ann', name: 'Ann', handle: 'ann' })).statusCode, 201)
  t.equal((await call(app, 'POST', '/api/content/posts', { _slug: 'live', title: 'Live', code: 'LIVE', author: 'ann' })).statusCode, 201)
  t.equal((await call(app, 'PUT', '/api/content/posts/live', { title: 'Live v2', code: 'LIVE', author: 'ann' })).statusCode, 200)
  t.equal((await call(app, 'POST', '/api/content/posts', { _slug: 'hidden', _status: 'draft', title: 'Hidden', code: 'HID' })).statusCode, 201)
  t.equal((await call(app, 'PUT', '/api/content/posts/live/draft', { title: 'Live pending', code: 'LIVE', author: 'ann' })).statusCode, 200)
  const at = new Date(Date.now() + 3_600_000).toISOString()
  t.equal((await call(app, 'POST', '/api/content/posts/hidden/schedule', { action: 'publish', at })).statusCode, 201)
}

/** The entries written by writeEveryState, seen through `query` (e.g. `?_locale=en`). */
async function expectEveryState (t: Test, app: App, query: string, what: string): Promise<void> {
  const sep = query === '' ? '?' : '&'
  const live = await call(app, 'GET', `/api/content/posts/live${query}`)
  t.equal(live.statusCode, 200, `${what}: the published entry`)
  t.equal(live.json().title, 'Live v2', `${what}: its data`)
  t.equal((await call(app, 'GET', `/api/content/posts/hidden${query}`)).statusCode, 200, `${what}: the draft (keys off: drafts visible)`)
  t.equal((await call(app, 'GET', `/api/content/posts${query}${sep}_status=all`)).json().total, 2, `${what}: listed`)
  const versions = await call(app, 'GET', `/api/content/posts/live/versions${query}`)
  t.equal(versions.statusCode, 200, `${what}: versions`)
  t.strictSame((versions.json() as { items: Array<{ version: number }> }).items.map(v => v.version), [2, 1], `${what}: both versions, newest first`)
  const draft = await call(app, 'GET', `/api/content/posts/live/draft${query}`)
  t.equal(draft.statusCode, 200, `${what}: the pending draft`)
  t.equal(draft.json().title, 'Live pending')
  // Schedules are listed per environment, every locale.
  const environment = query.includes('_environment') ? query : ''
  const schedules = (await call(app, 'GET', `/api/schedules${environment}`)).json() as { items: Array<{ slug: string }> }
  t.strictSame(schedules.items.map(s => s.slug), ['hidden'], `${what}: the schedule`)
  // The rules see it: the slug is taken, the unique value is held, the reference resolves.
  t.equal((await call(app, 'POST', `/api/content/posts${query}`, { _slug: 'live', title: 'Again' })).statusCode, 409, `${what}: 409`)
  t.equal((await call(app, 'POST', `/api/content/posts${query}`, { _slug: 'other', title: 'Other', code: 'LIVE' })).statusCode, 422, `${what}: unique`)
  const check = await call(app, 'GET', `/api/collections/posts/slug-check${query}${sep}slug=live`)
  t.equal(check.json().available, false, `${what}: slug check`)
  const resolved = await call(app, 'GET', `/api/content/posts/live${query}${sep}_resolve=author`)
  t.equal(resolved.json().author?.name, 'Ann', `${what}: the reference resolves`)
}

eachStore(t, async (t, _store, env) => {
  t.test('locales off → on → off → on: content written without locales is the default locale\'s, and the others come back', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    writeSchemas(dataDir)
    const open = async (extra: Env): Promise<App> => await build(t, { ...env, ...extra }, { dataDir, keepOpen: true })

    let app = await open({})
    await writeEveryState(t, app)
    const cursor = await lastCursor(app)
    await app.close()

    app = await open({ CMS_LOCALES: 'en,de' })
    await expectEveryState(t, app, '', 'locales on, no _locale')
    await expectEveryState(t, app, '?_locale=en', 'locales on, en')
    t.equal((await call(app, 'GET', '/api/content/posts?_locale=de&_status=all')).json().total, 0, 'nothing in de yet')
    const fed = await since(app, cursor)
    t.equal(fed.status, 200, 'the old cursor still works')
    t.equal(fed.items.get('live'), 'upsert', 'the change feed tells a client that kept its cursor')
    t.equal((await synced(app, '&_locale=en')).get('live'), 'upsert', 'a fresh sync of en has it')
    t.equal((await call(app, 'POST', '/api/content/posts?_locale=de', { _slug: 'live', title: 'Lebendig', code: 'LIVE' })).statusCode, 201, 'de has its own slugs and unique values')
    t.equal((await call(app, 'POST', '/api/content/posts?_locale=de', { _slug: 'nur-de', title: 'Nur deutsch' })).statusCode, 201)
    await app.close()

    app = await open({})
    await expectEveryState(t, app, '', 'locales off again')
    t.equal((await call(app, 'GET', '/api/content/posts/nur-de')).statusCode, 404, 'another locale\'s entry is kept out of sight')
    await app.close()

    app = await open({ CMS_LOCALES: 'en,de' })
    await expectEveryState(t, app, '?_locale=en', 'locales on again, en')
    t.equal((await call(app, 'GET', '/api/content/posts/live?_locale=de')).json().title, 'Lebendig', 'de\'s content came back')
    t.equal((await call(app, 'GET', '/api/content/posts/nur-de?_locale=de')).statusCode, 200)
    await app.close()
  })

  t.test('environments off → on → off: the default environment holds what was written without environments', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    writeSchemas(dataDir)
    const open = async (extra: Env): Promise<App> => await build(t, { ...env, ...extra }, { dataDir, keepOpen: true })

    let app = await open({})
    await writeEveryState(t, app)
    await app.close()

    app = await open({ CMS_ENVIRONMENTS: 'production,staging' })
    await expectEveryState(t, app, '', 'environments on, no _environment')
    await expectEveryState(t, app, '?_environment=production', 'environments on, production')
    t.equal((await call(app, 'GET', '/api/content/posts?_environment=staging&_status=all')).json().total, 0, 'nothing staged yet')
    t.equal((await call(app, 'POST', '/api/content/posts?_environment=staging', { _slug: 'staged', title: 'Staged' })).statusCode, 201)
    await app.close()

    app = await open({})
    await expectEveryState(t, app, '', 'environments off again')
    t.equal((await call(app, 'GET', '/api/content/posts/staged')).statusCode, 404, 'staging is kept out of sight')
    await app.close()

    app = await open({ CMS_ENVIRONMENTS: 'production,staging' })
    t.equal((await call(app, 'GET', '/api/content/posts/staged?_environment=staging')).statusCode, 200, 'staging came back')
    await expectEveryState(t, app, '?_environment=production', 'environments on again')
    await app.close()
  })
})
