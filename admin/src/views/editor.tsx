// The entry editor: a form generated from the resolved schema, a live slug check, server
// messages beside their fields, save as draft or publish, delete, and the "used by" panel. A
// published entry is edited through its pending draft (contract §13): "Save draft" keeps the
// live entry online, "Publish changes" applies the draft, "Discard draft" drops it. The side
// column has the entry's history (history.tsx) and its schedules (schedules.tsx).
import type { JSX } from 'preact'
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { ApiError, api, describeError, getCounted, isNotFound, seg } from '../api.js'
import { autosaveKey, clearAutosave, readAutosave, writeAutosave, type Autosaved } from '../autosave.js'
import { ask, useLeaveGuard } from '../guard.js'
import { scopeQuery, useApp, type Scope } from '../context.js'
import { FieldList } from '../fields/fields.js'
import { MissingReferences } from './missing-references.js'
import { History } from './history.js'
import { EntrySchedules } from './schedules.js'
import { contentDiffers } from '../diff.js'
import { FormContext, initialValues, placeMessages, prune, renderedPaths, messagePath, type FormState } from '../fields/form.js'
import { href, navigate } from '../router.js'
import { displayField, entryTitle, schemaLabel } from '../schema.js'
import { canWriteContent } from '../session.js'
import type { Entry, EntryStatus, Referrer, ResolvedSchema, SlugCheckResult } from '../types.js'
import { ConfirmDialog, ErrorSummary, Link, Loading, PageTitle, Problem, StatusBadge, fieldId, formatDate, useDebounced, useLoad } from '../ui.js'

const SYSTEM = new Set(['_slug', '_status', '_created_at', '_updated_at', '_version'])

/** The schema fields of an entry (and any extra fields a non-strict schema allowed). */
export function dataOf (entry: Entry): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(entry)) if (!SYSTEM.has(name)) out[name] = value
  return out
}

export function EntryEditor ({ collection, slug }: { collection: string, slug: string | null }): JSX.Element {
  const { scope, locales } = useApp()
  const schema = useLoad(async signal => await api.get<ResolvedSchema>(`/api/collections/${seg(collection)}`, undefined, signal), [collection])
  const entry = useLoad(async signal => slug === null ? null : await loadEntry(collection, slug, scope, signal),
    [collection, slug, scope.locale, scope.environment])
  const [translating, setTranslating] = useState<Record<string, unknown> | null>(null)
  const scopeKey = `${scope.locale ?? ''}|${scope.environment ?? ''}`
  useEffect(() => { setTranslating(null) }, [scopeKey])

  if (schema.data === undefined) {
    if (schema.loading) return <Loading />
    return <><PageTitle title={collection}>{collection}</PageTitle><Problem error={schema.error} retry={schema.reload} /></>
  }
  if (entry.loading && entry.data === undefined) return <Loading />

  if (slug !== null && entry.data === undefined) {
    if (isNotFound(entry.error) && translating === null) {
      return (
        <MissingEntry
          schema={schema.data} slug={slug} scope={scope}
          localized={locales.locales.length > 0}
          onTranslate={values => { setTranslating(values) }}
        />
      )
    }
    if (translating === null) {
      return <><PageTitle title={slug}>{slug}</PageTitle><Problem error={entry.error} retry={entry.reload} /></>
    }
  }

  const existing = entry.data?.live ?? null
  const pending = entry.data?.draft ?? null
  return (
    <EditorForm
      key={`${scopeKey}|${existing === null ? 'new' : 'edit'}`}
      schema={schema.data}
      entry={existing}
      pendingDraft={pending}
      fixedSlug={existing === null && slug !== null ? slug : null}
      initial={translating ?? (pending !== null ? dataOf(pending) : existing !== null ? dataOf(existing) : initialValues(schema.data.fields))}
      onCreated={created => {
        const url = href(['content', collection, 'entry', created._slug])
        if (slug === created._slug) {
          setTranslating(null)
          entry.reload()
        } else {
          navigate(url, { replace: true })
        }
      }}
    />
  )
}

/** The live entry and, when it is published, its pending draft (null when it has none). */
async function loadEntry (collection: string, slug: string, scope: Scope, signal: AbortSignal): Promise<{ live: Entry, draft: Entry | null }> {
  const path = `/api/content/${seg(collection)}/${seg(slug)}`
  const live = await api.get<Entry>(path, scopeQuery(scope), signal)
  if (live._status !== 'published') return { live, draft: null }
  try {
    return { live, draft: await api.get<Entry>(`${path}/draft`, scopeQuery(scope), signal) }
  } catch (err) {
    if (isNotFound(err)) return { live, draft: null }
    throw err
  }
}

/** The entry does not exist in this locale or environment: offer to create that version. */
function MissingEntry ({ schema, slug, scope, localized, onTranslate }: {
  schema: ResolvedSchema
  slug: string
  scope: Scope
  localized: boolean
  onTranslate: (values: Record<string, unknown>) => void
}): JSX.Element {
  const { session, locales } = useApp()
  const [error, setError] = useState<string | null>(null)
  const where = [scope.locale !== null && localized ? `locale ${scope.locale}` : null, scope.environment !== null ? `environment ${scope.environment}` : null].filter(Boolean).join(', ')
  const start = async (copy: boolean): Promise<void> => {
    if (!copy) { onTranslate({}); return }
    try {
      // Copy the fields of the default locale's version as a starting point.
      const source = await api.get<Entry>(`/api/content/${seg(schema.name)}/${seg(slug)}`, { _locale: locales.default, _environment: scope.environment })
      onTranslate(dataOf(source))
    } catch (err) {
      setError(isNotFound(err) ? 'There is no version in the default locale to copy.' : describeError(err))
    }
  }
  return (
    <>
      <PageTitle title={slug}>{slug}</PageTitle>
      <div class='card'>
        <p>
          <strong>{schemaLabel(schema)}</strong> has no entry <code>{slug}</code>{where !== '' ? ` in ${where}` : ''}.
        </p>
        {canWriteContent(session.role) && localized && scope.locale !== null && scope.locale !== locales.default && (
          <div class='actions'>
            <button type='button' class='primary' onClick={() => { void start(true) }}>Create the {scope.locale} version from {locales.default}</button>
            <button type='button' onClick={() => { void start(false) }}>Start the {scope.locale} version empty</button>
          </div>
        )}
        {error !== null && <p role='alert' class='field-error'>{error}</p>}
        <p><Link href={href(['content', schema.name])}>Back to {schemaLabel(schema)}</Link></p>
      </div>
    </>
  )
}

interface FormProps {
  schema: ResolvedSchema
  entry: Entry | null
  /** The pending draft of a published entry (contract §13), or null. */
  pendingDraft: Entry | null
  /** A create whose slug is given (another locale's version of an existing entry). */
  fixedSlug: string | null
  initial: Record<string, unknown>
  onCreated: (entry: Entry) => void
}

/** The local autosave of an editor (autosave.ts): the copy found at start, and a copy made 400 ms after each edit. */
function useAutosave (key: string, dirty: boolean, values: Record<string, unknown>, slug: string): [Autosaved | null, (copy: Autosaved | null) => void] {
  const [recovered, setRecovered] = useState<Autosaved | null>(() => readAutosave(key))
  useEffect(() => {
    if (!dirty) return
    const timer = setTimeout(() => { writeAutosave(key, values, slug) }, 400)
    return () => { clearTimeout(timer) }
  }, [dirty, values, slug, key])
  return [recovered, setRecovered]
}

/** Ctrl+S (Cmd+S) calls the latest `save`, instead of the browser's "save page". */
function useSaveShortcut (enabled: boolean, save: () => void): void {
  const latest = useRef(save)
  latest.current = save
  useEffect(() => {
    if (!enabled) return
    const onKey = (e: KeyboardEvent): void => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 's') {
        e.preventDefault()
        latest.current()
      }
    }
    addEventListener('keydown', onKey)
    return () => { removeEventListener('keydown', onKey) }
  }, [enabled])
}

function normalizeSlugHint (text: string): string {
  return text.trim().toLowerCase().normalize('NFKD').replace(/\p{M}+/gu, '')
    .replace(/[^a-z0-9\s_-]+/g, '').replace(/[\s_]+/g, '-').replace(/-+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80)
}

type Saving = EntryStatus | 'pending' | 'publish-changes' | 'discard' | 'unpublish' | 'delete'

function EditorForm ({ schema, entry, pendingDraft, fixedSlug, initial, onCreated }: FormProps): JSX.Element {
  const { scope, session, notify } = useApp()
  const collection = schema.name
  const isNew = entry === null
  const canWrite = canWriteContent(session.role)
  const titleField = displayField(schema)

  const [values, setValues] = useState<Record<string, unknown>>(initial)
  const [stored, setStored] = useState<Entry | null>(entry)
  const [pending, setPending] = useState<Entry | null>(pendingDraft)
  const live = stored !== null && stored._status === 'published'
  const [slugText, setSlugText] = useState(fixedSlug ?? '')
  const [slugTouched, setSlugTouched] = useState(fixedSlug !== null)
  const [messages, setMessages] = useState<string[]>([])
  const [localErrors, setLocalErrors] = useState<ReadonlyMap<string, string>>(new Map())
  const [saving, setSaving] = useState<Saving | null>(null)
  const [confirmDelete, setConfirmDelete] = useState(false)
  const [dirty, setDirty] = useState(false)

  // Suggest a slug from the title until the slug is edited by hand.
  const titleValue = titleField !== null ? values[titleField] : undefined
  useEffect(() => {
    if (isNew && !slugTouched && typeof titleValue === 'string') setSlugText(normalizeSlugHint(titleValue))
  }, [titleValue, isNew, slugTouched])

  useLeaveGuard(dirty)
  const draftKey = autosaveKey(collection, stored?._slug ?? fixedSlug, scope)
  const [recovered, setRecovered] = useAutosave(draftKey, dirty, values, slugText)
  const [referrerTotal, setReferrerTotal] = useState<number | null>(null)

  const setLocalError = useCallback((path: string, message: string | null) => {
    setLocalErrors(current => {
      if ((current.get(path) ?? null) === message) return current
      const next = new Map(current)
      if (message === null) next.delete(path)
      else next.set(path, message)
      return next
    })
  }, [])

  const paths = useMemo(() => renderedPaths(schema.fields, values), [schema.fields, values])
  const placed = useMemo(() => {
    const map = placeMessages(messages, new Set([...paths, '_slug']))
    return map
  }, [messages, paths])

  const form: FormState = useMemo(() => ({
    disabled: !canWrite || saving !== null,
    isNew,
    scope,
    errors: placed,
    setLocalError
  }), [canWrite, saving, isNew, scope, placed, setLocalError])

  /** The body to send, or null when local checks fail (their messages shown). */
  const bodyToSend = (status: EntryStatus): Record<string, unknown> | null => {
    if (localErrors.size > 0) {
      setMessages([...localErrors].map(([path, message]) => `${path}: ${message}`))
      return null
    }
    const body: Record<string, unknown> = { ...prune(schema.fields, values), _status: status }
    if (isNew) {
      if (slugText.trim() === '') {
        setMessages(['_slug: enter a slug: the entry\'s address in its collection.'])
        return null
      }
      body._slug = slugText.trim()
    }
    return body
  }

  const showFailure = (err: unknown): void => {
    if (err instanceof ApiError && err.status === 422 && err.errors.length > 0) setMessages(err.errors)
    // A create's 409 is its slug; an update's is another request's write (or a draft entry), not the slug's.
    else if (err instanceof ApiError && err.status === 409) setMessages([isNew ? `_slug: ${err.message}` : err.message])
    else if (err instanceof ApiError && err.status === 400 && /slug/i.test(err.message)) setMessages([`_slug: ${err.message}`])
    else setMessages([describeError(err)])
  }

  /** The form now matches what the server holds: no unsaved changes, no autosave copy. */
  const settled = (shown: Entry): void => {
    setDirty(false)
    clearAutosave(draftKey)
    setRecovered(null)
    setValues(dataOf(shown))
  }

  const save = async (status: EntryStatus): Promise<void> => {
    const body = bodyToSend(status)
    if (body === null) return
    setSaving(status)
    setMessages([])
    try {
      const query = scopeQuery(scope)
      const saved = isNew
        ? await api.post<Entry>(`/api/content/${seg(collection)}`, body, query)
        : await api.put<Entry>(`/api/content/${seg(collection)}/${seg(stored?._slug ?? '')}`, body, query)
      setDirty(false)
      clearAutosave(draftKey)
      setRecovered(null)
      notify(isNew
        ? `Created “${entryTitle(saved, titleField)}” as ${saved._status}.`
        : `Saved “${entryTitle(saved, titleField)}” (${saved._status}).`)
      if (isNew) {
        onCreated(saved)
      } else {
        setStored(saved)
        setValues(dataOf(saved))
      }
    } catch (err) {
      showFailure(err)
    } finally {
      setSaving(null)
    }
  }

  // ---- a published entry: its pending draft (contract §13) ----
  const entryPath = `/api/content/${seg(collection)}/${seg(stored?._slug ?? '')}`

  /** PUT .../draft with the form: the live entry stays as it is. */
  const putDraft = async (body: Record<string, unknown>): Promise<Entry> => {
    const saved = await api.put<Entry>(`${entryPath}/draft`, body, scopeQuery(scope))
    setPending(saved)
    settled(saved)
    return saved
  }

  const saveDraft = async (): Promise<void> => {
    const body = bodyToSend('published')
    if (body === null) return
    setSaving('pending')
    setMessages([])
    try {
      const saved = await putDraft(body)
      notify(`Saved “${entryTitle(saved, titleField)}” as a pending draft: the live entry is unchanged.`)
    } catch (err) {
      showFailure(err)
    } finally {
      setSaving(null)
    }
  }

  /** Saves the form as the pending draft when it has unsaved changes, then publishes the draft. */
  const publishChanges = async (): Promise<void> => {
    const body = bodyToSend('published')
    if (body === null) return
    setSaving('publish-changes')
    setMessages([])
    try {
      if (dirty || pending === null) await putDraft(body)
      const saved = await api.post<Entry>(`${entryPath}/draft/publish`, undefined, scopeQuery(scope))
      setStored(saved)
      setPending(null)
      settled(saved)
      notify(`Published the changes to “${entryTitle(saved, titleField)}”.`)
    } catch (err) {
      showFailure(err)
    } finally {
      setSaving(null)
    }
  }

  const discardDraft = async (): Promise<void> => {
    if (stored === null) return
    const yes = await ask(pending !== null
      ? {
          title: 'Discard the pending draft?',
          message: `The draft's changes${dirty ? ', and your unsaved edits,' : ''} will be lost. The live entry stays as it is.`,
          confirmLabel: 'Discard draft'
        }
      : { title: 'Discard your changes?', message: 'Your unsaved edits will be lost. The live entry stays as it is.', confirmLabel: 'Discard changes' })
    if (!yes) return
    setSaving('discard')
    try {
      if (pending !== null) await api.delete(`${entryPath}/draft`, scopeQuery(scope))
      setPending(null)
      settled(stored)
      notify('The pending draft is discarded: the form shows the live entry.')
    } catch (err) {
      notify(`Not discarded: ${describeError(err)}`, 'error')
    } finally {
      setSaving(null)
    }
  }

  /** Takes a published entry offline (a PATCH of `_status`): offered with no draft and no unsaved edits. */
  const unpublish = async (): Promise<void> => {
    setSaving('unpublish')
    try {
      const saved = await api.patch<Entry>(entryPath, { _status: 'draft' }, scopeQuery(scope))
      setStored(saved)
      settled(saved)
      notify(`Unpublished “${entryTitle(saved, titleField)}”: it is a draft now.`)
    } catch (err) {
      notify(`Not unpublished: ${describeError(err)}`, 'error')
    } finally {
      setSaving(null)
    }
  }

  /** A version restored from the history: the editor shows the entry as it is now. */
  const restored = (entry: Entry): void => {
    setStored(entry)
    setPending(null)
    setMessages([])
    settled(entry)
  }

  const remove = async (): Promise<void> => {
    if (stored === null) return
    setConfirmDelete(false)
    setSaving('delete')
    try {
      await api.delete(`/api/content/${seg(collection)}/${seg(stored._slug)}`, scopeQuery(scope))
      setDirty(false)
      clearAutosave(draftKey)
      notify(`Deleted “${entryTitle(stored, titleField)}”.`)
      navigate(href(['content', collection]))
    } catch (err) {
      setSaving(null)
      notify(`Not deleted: ${describeError(err)}`, 'error')
    }
  }

  // Ctrl/Cmd+S is the form's default action: a published entry's pending draft (never taking it
  // offline), else a save with the entry's current status.
  const saveDefault = (): void => { void (live ? saveDraft() : save(stored?._status ?? 'published')) }
  useSaveShortcut(canWrite, saveDefault)
  const draftDiffers = live && pending !== null && contentDiffers(dataOf(pending), dataOf(stored))

  const restore = (copy: Autosaved): void => {
    setValues(copy.values)
    if (isNew && fixedSlug === null && copy.slug !== '') { setSlugText(copy.slug); setSlugTouched(true) }
    setDirty(true)
    setRecovered(null)
    notify('Your unsaved edits are back. Save to keep them.', 'info')
  }

  const heading = stored !== null ? entryTitle({ ...stored, ...values } as Entry, titleField) : 'New entry'
  const slugMessages = placed.get('_slug') ?? []
  const summaryFieldId = (message: string): string | null => {
    const parsed = messagePath(message)
    if (parsed === null) return null
    if (parsed.path === '_slug') return 'field-_slug'
    const parts = parsed.path.split('.')
    for (let n = parts.length; n > 0; n--) {
      const candidate = parts.slice(0, n).join('.')
      if (paths.has(candidate)) return fieldId(candidate)
    }
    return null
  }

  return (
    <div class='editor-layout'>
      <div class='editor-main'>
        <nav class='breadcrumbs' aria-label='Breadcrumbs'>
          <Link href={href(['content', collection])}>{schemaLabel(schema)}</Link>
          <span aria-hidden='true'> / </span>
          <span>{stored?._slug ?? 'new'}</span>
        </nav>
        <div class='page-head'>
          <PageTitle title={heading}>{heading}</PageTitle>
          {stored !== null && <StatusBadge status={stored._status} />}
          {scope.locale !== null && <span class='badge'>{scope.locale}</span>}
          {scope.environment !== null && <span class='badge'>{scope.environment}</span>}
          {draftDiffers && <span class='badge pending-draft' id='pending-draft-badge'>pending draft: differs from the live entry</span>}
          {dirty && <span class='badge unsaved'>unsaved changes</span>}
          {stored !== null && session.previewUrl !== null && (
            <a class='button push-right' href={previewHref(session.previewUrl, collection, stored._slug, scope)} target='_blank' rel='noopener noreferrer'>
              Open preview<span class='visually-hidden'> (opens a new tab)</span>
            </a>
          )}
        </div>
        {!canWrite && <p class='notice info'>Read-only: your role can view content, drafts included, but not change it.</p>}
        {live && pending !== null && (
          <p class='notice info' role='note'>
            {canWrite ? 'You are editing the pending draft' : 'This is the pending draft'} of a published entry, saved {formatDate(pending._updated_at)}.
            The live entry stays online, as it is, until the draft is published.
          </p>
        )}
        {canWrite && recovered !== null && (
          <div class='notice info recover' role='region' aria-label='Unsaved edits found'>
            <p>Unsaved edits of this entry from {formatDate(recovered.savedAt)} were kept in this browser.</p>
            <div class='actions'>
              <button type='button' class='primary' onClick={() => { restore(recovered) }}>Bring them back</button>
              <button type='button' onClick={() => { clearAutosave(draftKey); setRecovered(null) }}>Discard them</button>
            </div>
          </div>
        )}
        {isNew && fixedSlug !== null && scope.locale !== null && <MissingReferences schema={schema} values={initial} scope={scope} />}
        <ErrorSummary title={`The entry was not saved: ${messages.length === 1 ? '1 problem' : `${messages.length} problems`}`} errors={messages} fieldId={summaryFieldId} />
        <form
          class='entry-form' noValidate aria-label={`${schemaLabel(schema)} entry`}
          onInput={() => { setDirty(true) }}
          onSubmit={e => { e.preventDefault(); saveDefault() }}
        >
          <FormContext.Provider value={form}>
            {isNew
              ? (
                <SlugField
                  collection={collection} scope={scope} value={slugText} fixed={fixedSlug !== null} errors={slugMessages}
                  disabled={!canWrite || saving !== null}
                  onChange={v => { setSlugText(v); setSlugTouched(true) }}
                />
                )
              : (
                <p class='slug-line'>Slug <code>{stored?._slug}</code></p>
                )}
            <FieldList fields={schema.fields} value={values} path='' onChange={next => { setValues(next); setDirty(true) }} />
          </FormContext.Provider>
          {canWrite && live && (
            <div class='form-actions'>
              <button type='button' disabled={saving !== null} onClick={() => { void saveDraft() }}>
                {saving === 'pending' ? 'Saving…' : 'Save draft'}
              </button>
              <button type='button' class='primary' disabled={saving !== null || (pending === null && !dirty)} onClick={() => { void publishChanges() }}>
                {saving === 'publish-changes' ? 'Publishing…' : 'Publish changes'}
              </button>
              {(pending !== null || dirty) && (
                <button type='button' disabled={saving !== null} onClick={() => { void discardDraft() }}>
                  {saving === 'discard' ? 'Discarding…' : pending !== null ? 'Discard draft…' : 'Discard changes…'}
                </button>
              )}
              {pending === null && !dirty && (
                <button type='button' disabled={saving !== null} onClick={() => { void unpublish() }}>
                  {saving === 'unpublish' ? 'Unpublishing…' : 'Unpublish'}
                </button>
              )}
              <button type='button' class='danger push-right' disabled={saving !== null} onClick={() => { setConfirmDelete(true) }}>Delete…</button>
            </div>
          )}
          {canWrite && !live && (
            <div class='form-actions'>
              <button type='button' disabled={saving !== null} onClick={() => { void save('draft') }}>
                {saving === 'draft' ? 'Saving…' : 'Save as draft'}
              </button>
              <button type='button' class='primary' disabled={saving !== null} onClick={() => { void save('published') }}>
                {saving === 'published' ? 'Publishing…' : 'Publish'}
              </button>
              {stored !== null && (
                <button type='button' class='danger push-right' disabled={saving !== null} onClick={() => { setConfirmDelete(true) }}>Delete…</button>
              )}
            </div>
          )}
        </form>
      </div>
      {stored !== null && (
        <aside class='editor-side'>
          <section class='card' aria-labelledby='entry-info'>
            <h2 id='entry-info'>Entry</h2>
            <dl class='meta'>
              <dt>Status</dt><dd><StatusBadge status={stored._status} /></dd>
              <dt>Created</dt><dd>{formatDate(stored._created_at)}</dd>
              <dt>Updated</dt><dd>{formatDate(stored._updated_at)}</dd>
            </dl>
            <EntryLocales collection={collection} slug={stored._slug} scope={scope} />
          </section>
          <History
            schema={schema} entry={stored} hasDraft={pending !== null} dirty={dirty} canWrite={canWrite}
            onRestored={restored}
          />
          <EntrySchedules collection={collection} slug={stored._slug} canWrite={canWrite} />
          <UsedBy collection={collection} slug={stored._slug} onTotal={setReferrerTotal} />
        </aside>
      )}
      <ConfirmDialog
        open={confirmDelete}
        title='Delete this entry?'
        message={(
          <>
            <p>“{heading}” will be removed{scope.locale !== null ? ` in ${scope.locale}` : ''}. This cannot be undone.</p>
            {referrerTotal !== null && referrerTotal > 0 && (
              <p class='warning'><strong>{referrerTotal === 1 ? '1 entry refers' : `${referrerTotal} entries refer`} to it</strong> (see Used by): {referrerTotal === 1 ? 'its reference' : 'their references'} will point to nothing.</p>
            )}
          </>
        )}
        confirmLabel='Delete entry'
        onConfirm={() => { void remove() }}
        onCancel={() => { setConfirmDelete(false) }}
      />
    </div>
  )
}

function SlugField ({ collection, scope, value, fixed, errors, disabled, onChange }: {
  collection: string
  scope: Scope
  value: string
  fixed: boolean
  errors: string[]
  disabled: boolean
  onChange: (value: string) => void
}): JSX.Element {
  const debounced = useDebounced(value.trim(), 250)
  const check = useLoad(async signal => debounced === ''
    ? null
    : await api.get<SlugCheckResult>(`/api/collections/${seg(collection)}/slug-check`, { slug: debounced, ...scopeQuery(scope) }, signal),
  [collection, debounced, scope.locale, scope.environment])
  const result = check.data
  const stale = debounced !== value.trim()
  let status: JSX.Element | string = ''
  let bad = false
  if (value.trim() === '') status = 'The entry\'s address in its collection: letters, digits and hyphens.'
  else if (stale || check.loading) status = 'Checking…'
  else if (check.error !== null) status = `Could not check the slug: ${describeError(check.error)}`
  else if (result !== null && result !== undefined) {
    if (!result.valid) { bad = true; status = result.error ?? 'This slug is not valid.' } else if (!result.available) { bad = true; status = `“${result.normalized}” is already used in this collection.` } else status = result.normalized === value.trim() ? '✓ Available' : `✓ Available, saved as “${result.normalized}”`
  }
  return (
    <div class={`field ${errors.length > 0 || bad ? 'has-error' : ''}`} data-path='_slug'>
      <label for='field-_slug'>Slug<span class='required' aria-hidden='true'> *</span></label>
      <input
        id='field-_slug' value={value} readOnly={disabled || fixed} aria-required='true' spellcheck={false}
        aria-invalid={errors.length > 0 || bad} aria-describedby={`slug-status${errors.length > 0 ? ' slug-error' : ''}`}
        onInput={e => { onChange(e.currentTarget.value) }}
      />
      <p id='slug-status' class={`hint ${bad ? 'bad' : ''}`} aria-live='polite'>{status}</p>
      {errors.length > 0 && <div id='slug-error' class='field-error'>{errors.map((e, i) => <p key={i}>{e}</p>)}</div>}
    </div>
  )
}

/** Which locales the entry exists in: one small read per configured locale (`_fields=_slug`). */
function EntryLocales ({ collection, slug, scope }: { collection: string, slug: string, scope: Scope }): JSX.Element | null {
  const { locales } = useApp()
  const present = useLoad(async signal => await Promise.all(locales.locales.map(async locale => {
    try {
      await api.get<Entry>(`/api/content/${seg(collection)}/${seg(slug)}`, { _locale: locale, _environment: scope.environment, _fields: '_slug' }, signal)
      return true
    } catch (err) {
      if (isNotFound(err)) return false
      throw err
    }
  })), [collection, slug, scope.environment, locales.locales.join(',')])
  if (locales.locales.length === 0 || present.data === undefined) return null
  return (
    <>
      <h3 class='small-heading'>Locales</h3>
      <ul class='entry-locales'>
        {locales.locales.map((locale, i) => (
          <li key={locale}>
            <Link href={href(['content', collection, 'entry', slug], { locale: locale === locales.default ? null : locale })} aria-current={locale === scope.locale ? 'page' : undefined}>
              {locale}
            </Link>{' '}
            <span class='muted'>{present.data?.[i] === true ? 'exists' : 'missing'}</span>
          </li>
        ))}
      </ul>
    </>
  )
}

/** CMS_PREVIEW_URL with its placeholders filled, each value URL-encoded. */
export function previewHref (template: string, collection: string, slug: string, scope: Scope): string {
  const values: Record<string, string> = { collection, slug, locale: scope.locale ?? '', environment: scope.environment ?? '' }
  return template.replace(/\{(collection|slug|locale|environment)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ''))
}

const USED_BY_PAGE = 10

function UsedBy ({ collection, slug, onTotal }: { collection: string, slug: string, onTotal: (total: number | null) => void }): JSX.Element {
  const [page, setPage] = useState(1)
  const referrers = useLoad(async signal => await getCounted<Referrer[]>(
    `/api/content/${seg(collection)}/${seg(slug)}/referrers`, { _page: page, _per_page: USED_BY_PAGE }, signal
  ), [collection, slug, page], { keep: true })
  const total = referrers.data?.total ?? null
  useEffect(() => { onTotal(total) }, [total])
  const pages = total === null ? 1 : Math.max(1, Math.ceil(total / USED_BY_PAGE))
  const items = referrers.data?.body ?? []
  return (
    <section class='card' aria-labelledby='used-by'>
      <h2 id='used-by'>Used by{total !== null && total > 0 ? ` (${total})` : ''}</h2>
      {referrers.loading && referrers.data === undefined && <Loading />}
      {referrers.error !== null && <p class='muted'>{describeError(referrers.error)}</p>}
      {referrers.data !== undefined && (
        items.length === 0
          ? <p class='muted'>No other entry refers to this one.</p>
          : (
            <ul class='referrers'>
              {items.map(r => (
                <li key={`${r.collection}/${r.slug}/${r.field}/${r.locale ?? ''}`}>
                  {/* Same tab: the session cookie serves every tab, but staying here keeps the guard in charge. */}
                  <Link href={href(['content', r.collection, 'entry', r.slug], r.locale !== null ? { locale: r.locale } : {})}>
                    {r.title ?? r.slug}
                  </Link>
                  <span class='muted'> · {r.collection}{r.title !== null ? ` ${r.slug}` : ''} · {r.field}{r.locale !== null ? ` · ${r.locale}` : ''}</span>
                </li>
              ))}
            </ul>
            )
      )}
      {pages > 1 && (
        <nav class='pager small' aria-label='Used by pages'>
          <button type='button' disabled={page <= 1} onClick={() => { setPage(p => p - 1) }}>Previous</button>
          <span>{page} of {pages}</span>
          <button type='button' disabled={page >= pages} onClick={() => { setPage(p => p + 1) }}>Next</button>
        </nav>
      )}
    </section>
  )
}
