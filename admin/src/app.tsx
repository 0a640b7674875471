// The shell: sign-in gate, top bar, sidebar (scope, collections, library, schemas), the page.
import type { JSX } from 'preact'
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api, describeError, setUnauthorizedHandler } from './api.js'
import { AppContext, useApp, type AppState, type NoticeKind, type Scope } from './context.js'
import { BASE, guardedSetQuery, href, navigate, useRoute, type Route } from './router.js'
import { detect, signOut as endSession, signOutEverywhere, type Session } from './session.js'
import type { CollectionSummary, Environments, Locales } from './types.js'
import { confirmLeave } from './guard.js'
import { ConfirmHost, Link, Loading, PageTitle, useLoad } from './ui.js'
import { SignIn } from './views/signin.js'
import { EntryList } from './views/entries.js'
import { EntryEditor } from './views/editor.js'
import { AssetLibrary } from './views/assets.js'
import { SchemaList, SchemaPage } from './views/schemas.js'
import { SchedulesScreen } from './views/schedules.js'

type Gate =
  | { state: 'checking' }
  | { state: 'unreachable', message: string }
  | { state: 'signed-out', message: string | null }
  | { state: 'signed-in', session: Session }

export function Root (): JSX.Element {
  const [gate, setGate] = useState<Gate>({ state: 'checking' })

  const check = useCallback(() => {
    setGate({ state: 'checking' })
    detect().then(result => {
      setGate(result.kind === 'signed-in' ? { state: 'signed-in', session: result.session } : { state: 'signed-out', message: null })
    }, (err: unknown) => { setGate({ state: 'unreachable', message: describeError(err) }) })
  }, [])

  useEffect(check, [check])

  const signOut = useCallback((message: string | null = null) => {
    setGate({ state: 'signed-out', message })
  }, [])

  useEffect(() => {
    setUnauthorizedHandler(() => { signOut('Your session has ended (it expired, or was signed out). Sign in again.') })
    return () => { setUnauthorizedHandler(null) }
  }, [signOut])

  switch (gate.state) {
    case 'checking':
      return <main class='gate'><Loading label='Connecting to Lectern…' /></main>
    case 'unreachable':
      return (
        <main class='gate'>
          <h1>Lectern admin</h1>
          <p role='alert'>{gate.message}</p>
          <button type='button' onClick={check}>Try again</button>
        </main>
      )
    case 'signed-out':
      return (
        <SignIn
          message={gate.message}
          onSignedIn={(session) => { setGate({ state: 'signed-in', session }) }}
        />
      )
    case 'signed-in':
      return <Shell session={gate.session} signOut={(message) => { signOut(message) }} />
  }
}

interface Notice { id: number, message: string, kind: NoticeKind }

function Shell ({ session, signOut }: { session: Session, signOut: (message: string | null) => void }): JSX.Element {
  const route = useRoute()
  const [menuOpen, setMenuOpen] = useState(false)
  const [notices, setNotices] = useState<Notice[]>([])
  const noticeId = useRef(0)

  const locales = useLoad(async signal => await api.get<Locales>('/api/locales', undefined, signal), [])
  const environments = useLoad(async signal => await api.get<Environments>('/api/environments', undefined, signal), [])
  const collections = useLoad(async signal => (await api.get<{ collections: CollectionSummary[] }>('/api/collections', undefined, signal)).collections, [])

  const localeList = locales.data ?? { locales: [], default: null }
  const environmentList = environments.data ?? null
  const wantedLocale = route.query.get('locale')
  const wantedEnvironment = route.query.get('env')
  const scope: Scope = {
    locale: wantedLocale !== null && localeList.locales.includes(wantedLocale) ? wantedLocale : localeList.default,
    // Only a configured environment is ever used: an unknown name in the URL falls back to the default.
    environment: wantedEnvironment !== null && environmentList?.environments.includes(wantedEnvironment) === true && wantedEnvironment !== environmentList.default ? wantedEnvironment : null
  }

  const notify = useCallback((message: string, kind: NoticeKind = 'success') => {
    const id = ++noticeId.current
    setNotices(list => [...list.slice(-2), { id, message, kind }])
    setTimeout(() => { setNotices(list => list.filter(n => n.id !== id)) }, kind === 'error' ? 10000 : 5000)
  }, [])

  // Close the drawer after navigating (mobile).
  const path = route.segments.join('/')
  useEffect(() => { setMenuOpen(false) }, [path])

  const state: AppState = useMemo(() => ({
    session,
    scope,
    locales: localeList,
    defaultEnvironment: environmentList?.default ?? 'default',
    collections: collections.data ?? null,
    reloadCollections: collections.reload,
    notify,
    signOut
  }), [session, scope.locale, scope.environment, localeList, environmentList, collections.data, notify, signOut])

  const leave = async (everywhere: boolean): Promise<void> => {
    if (!await confirmLeave()) return
    try {
      await (everywhere ? signOutEverywhere() : endSession())
      signOut(everywhere ? 'Every session, in every browser, is signed out.' : null)
    } catch (err) {
      notify(describeError(err), 'error')
    }
  }

  return (
    <AppContext.Provider value={state}>
      <a class='skip-link' href='#main'>Skip to content</a>
      <header class='topbar'>
        <button
          type='button' class='menu-toggle' aria-expanded={menuOpen} aria-controls='sidebar'
          onClick={() => { setMenuOpen(o => !o) }}
        >
          Menu
        </button>
        <Link class='brand' href={href([])}>Lectern</Link>
        <span class='spacer' />
        <span class='who'>
          {session.open
            ? <span class='badge role' title='The server has no API keys configured'>open access</span>
            : <span class='badge role' title='The role of your API key'>{session.role}</span>}
        </span>
        {!session.open && <button type='button' class='link-button' onClick={() => { void leave(false) }}>Sign out</button>}

      </header>
      <div class='shell'>
        <nav id='sidebar' class={`sidebar ${menuOpen ? 'open' : ''}`} aria-label='Main'>
          <ScopeControls scope={scope} locales={localeList} environments={environmentList} />
          <h2>Content</h2>
          {collections.error !== null && <p class='muted'>{describeError(collections.error)}</p>}
          <ul class='nav-list'>
            {(collections.data ?? []).map(c => (
              <li key={c.name}>
                <Link href={href(['content', c.name])} aria-current={route.segments[0] === 'content' && route.segments[1] === c.name ? 'page' : undefined}>
                  {c.label ?? c.name}
                </Link>
              </li>
            ))}
            {collections.data?.length === 0 && <li class='muted'>No collections yet.</li>}
          </ul>
          <h2>Workflow</h2>
          <ul class='nav-list'>
            <li><Link href={href(['schedules'])} aria-current={route.segments[0] === 'schedules' ? 'page' : undefined}>Schedules</Link></li>
          </ul>
          <h2>Library</h2>
          <ul class='nav-list'>
            <li><Link href={href(['assets'])} aria-current={route.segments[0] === 'assets' ? 'page' : undefined}>Assets</Link></li>
          </ul>
          <h2>Model</h2>
          <ul class='nav-list'>
            <li><Link href={href(['schemas'])} aria-current={route.segments[0] === 'schemas' ? 'page' : undefined}>Schemas</Link></li>
          </ul>
          {!session.open && session.role === 'admin' && (
            <>
              <h2>Sessions</h2>
              <button type='button' class='link-button' aria-describedby='sign-out-everywhere-hint' onClick={() => { void leave(true) }}>Sign out everywhere</button>
              <p id='sign-out-everywhere-hint' class='hint'>Ends every session of every user, in every browser. API keys keep working.</p>
            </>
          )}
        </nav>
        <main id='main' tabIndex={-1}>
          {/* The scope must be known before a page loads anything: an entry, or its autosave, is per locale and environment. */}
          {(locales.loading && locales.data === undefined) || (environments.loading && environments.data === undefined)
            ? <Loading />
            : <Page route={route} />}
        </main>
      </div>
      <ConfirmHost />
      <div class='notices'>
        {/* Live regions exist from the start, so screen readers announce what is added to them. */}
        <div role='status' aria-live='polite'>
          {notices.filter(n => n.kind !== 'error').map(n => <p key={n.id} class={`notice ${n.kind}`}>{n.message}</p>)}
        </div>
        <div role='alert' aria-live='assertive'>
          {notices.filter(n => n.kind === 'error').map(n => <p key={n.id} class='notice error'>{n.message}</p>)}
        </div>
      </div>
    </AppContext.Provider>
  )
}

function ScopeControls ({ scope, locales, environments }: { scope: Scope, locales: Locales, environments: Environments | null }): JSX.Element {
  // Pickers, not free text: only what GET /api/locales and /api/environments name can be chosen.
  return (
    <section class='scope' aria-label='Scope'>
      {locales.locales.length > 0 && (
        <div class='scope-field'>
          <label for='scope-locale'>Locale</label>
          <select
            id='scope-locale' value={scope.locale ?? ''}
            onChange={e => {
              const value = e.currentTarget.value
              guardedSetQuery({ locale: value === locales.default ? null : value })
            }}
          >
            {locales.locales.map(l => <option key={l} value={l}>{l}{l === locales.default ? ' (default)' : ''}</option>)}
          </select>
        </div>
      )}
      {environments !== null && environments.environments.length > 1 && (
        <div class='scope-field'>
          <label for='scope-env'>Environment</label>
          <select
            id='scope-env' value={scope.environment ?? environments.default}
            onChange={e => {
              const value = e.currentTarget.value
              guardedSetQuery({ env: value === environments.default ? null : value })
            }}
          >
            {environments.environments.map(name => <option key={name} value={name}>{name}{name === environments.default ? ' (default)' : ''}</option>)}
          </select>
        </div>
      )}
    </section>
  )
}

function Page ({ route }: { route: Route }): JSX.Element {
  const [first, second, third, fourth] = route.segments
  if (first === undefined) return <Home />
  if (first === 'content' && second !== undefined) {
    if (third === undefined) return <EntryList key={second} collection={second} />
    if (third === 'new') return <EntryEditor key={`${second}/new`} collection={second} slug={null} />
    if (third === 'entry' && fourth !== undefined) return <EntryEditor key={`${second}/${fourth}`} collection={second} slug={fourth} />
  }
  if (first === 'assets' && second === undefined) return <AssetLibrary />
  if (first === 'schedules' && second === undefined) return <SchedulesScreen />
  if (first === 'schemas') {
    if (second === undefined) return <SchemaList />
    if (second === 'new') return <SchemaPage key='new' name={null} />
    if (second === 'edit' && third !== undefined) return <SchemaPage key={third} name={third} />
  }
  return <NotFound />
}

function Home (): JSX.Element {
  const { collections } = useApp()
  useEffect(() => {
    // A single obvious place to go: open the first collection.
    if (collections !== null && collections.length > 0 && location.pathname.replace(/\/$/, '') === BASE) {
      const first = collections[0]
      if (first !== undefined) navigate(href(['content', first.name]), { replace: true })
    }
  }, [collections])
  if (collections === null) return <Loading />
  return (
    <>
      <PageTitle title='Content'>Content</PageTitle>
      {collections.length === 0 && (
        <p>There are no collections yet. <Link href={href(['schemas', 'new'])}>Create a schema</Link> to start one.</p>
      )}
    </>
  )
}

function NotFound (): JSX.Element {
  return (
    <>
      <PageTitle title='Not found'>Page not found</PageTitle>
      <p>This address does not match any admin page. <Link href={href([])}>Go to the start</Link>.</p>
    </>
  )
}
