// Small shared building blocks: links, page titles that take focus, loading state, dialogs.
import type { AnchorHTMLAttributes, ComponentChildren, JSX } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { describeError } from './api.js'
import { setAsker, type Question } from './guard.js'
import { onLinkClick } from './router.js'

export function Link (props: AnchorHTMLAttributes & { href: string }): JSX.Element {
  return <a {...props} onClick={onLinkClick} />
}

/**
 * The page's h1. It takes focus when the page opens, so screen readers announce the new
 * page and keyboard users start from the top of the content (not from the link they used).
 */
export function PageTitle ({ children, title }: { children: ComponentChildren, title: string }): JSX.Element {
  const ref = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${title} · Lectern admin`
    const active = document.activeElement
    // Do not steal focus from a field the user is typing in (e.g. a search box that updates the URL).
    if (active === null || active === document.body || !(ref.current?.closest('main')?.contains(active) ?? false)) {
      ref.current?.focus({ preventScroll: false })
    }
  }, [title])
  return <h1 ref={ref} tabIndex={-1}>{children}</h1>
}

export interface Loaded<T> {
  data: T | undefined
  error: unknown
  loading: boolean
  reload: () => void
}

/**
 * Runs `load` when `deps` change; aborts the previous run so a slow answer never wins.
 * New deps drop the old data (an entry of another locale must never show under this one)
 * unless `keep` is set (lists keep their rows while the next page loads); `reload()` keeps it.
 */
export function useLoad<T> (load: (signal: AbortSignal) => Promise<T>, deps: unknown[], options: { keep?: boolean } = {}): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined, error: unknown, loading: boolean }>({ data: undefined, error: null, loading: true })
  const [tick, setTick] = useState(0)
  const lastTick = useRef(tick)
  const keep = options.keep === true
  useEffect(() => {
    const reloading = lastTick.current !== tick
    lastTick.current = tick
    const controller = new AbortController()
    setState(s => ({ data: keep || reloading ? s.data : undefined, error: null, loading: true }))
    load(controller.signal).then(
      data => { if (!controller.signal.aborted) setState({ data, error: null, loading: false }) },
      (error: unknown) => { if (!controller.signal.aborted) setState({ data: undefined, error, loading: false }) }
    )
    return () => { controller.abort() }
  }, [...deps, tick])
  const reload = useCallback(() => { setTick(t => t + 1) }, [])
  return { ...state, reload }
}

export function useDebounced<T> (value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => { setDebounced(value) }, ms)
    return () => { clearTimeout(timer) }
  }, [value, ms])
  return debounced
}

export function Loading ({ label = 'Loading…' }: { label?: string }): JSX.Element {
  return <p class='loading' role='status'>{label}</p>
}

export function Problem ({ error, retry }: { error: unknown, retry?: () => void }): JSX.Element {
  return (
    <div class='problem' role='alert'>
      <p>{describeError(error)}</p>
      {retry !== undefined && <button type='button' onClick={retry}>Try again</button>}
    </div>
  )
}

interface DialogProps {
  open: boolean
  title: string
  onClose: () => void
  children: ComponentChildren
  class?: string
}

/**
 * A modal built on <dialog>: the browser traps focus and closes it on Escape. Focus goes
 * back to whatever opened it.
 */
export function Dialog ({ open, title, onClose, children, class: className }: DialogProps): JSX.Element {
  const ref = useRef<HTMLDialogElement>(null)
  const opener = useRef<Element | null>(null)
  const titleId = useRef(`dialog-${Math.random().toString(36).slice(2)}`).current
  useEffect(() => {
    const dialog = ref.current
    if (dialog === null) return
    if (open && !dialog.open) {
      opener.current = document.activeElement
      dialog.showModal()
    } else if (!open && dialog.open) {
      dialog.close()
    }
  }, [open])
  // A modal <dialog> makes the page inert, but Tab past its last control leaves the document (for
  // the browser's own toolbar): wrap around instead, so focus stays in the dialog.
  const keepFocus = (event: KeyboardEvent): void => {
    if (event.key !== 'Tab' || ref.current === null) return
    const controls = [...ref.current.querySelectorAll<HTMLElement>('button, [href], input, select, textarea, [tabindex]:not([tabindex="-1"])')].filter(el => !el.matches(':disabled'))
    const first = controls[0]
    const last = controls[controls.length - 1]
    if (first === undefined || last === undefined) return
    if (event.shiftKey && document.activeElement === first) { event.preventDefault(); last.focus() } else if (!event.shiftKey && document.activeElement === last) { event.preventDefault(); first.focus() }
  }
  const handleClose = (): void => {
    if (opener.current instanceof HTMLElement && opener.current.isConnected) opener.current.focus()
    opener.current = null
    onClose()
  }
  return (
    <dialog ref={ref} class={`dialog ${className ?? ''}`} aria-labelledby={titleId} onClose={handleClose} onKeyDown={keepFocus}>
      {open && (
        <>
          <header class='dialog-head'>
            <h2 id={titleId}>{title}</h2>
            <button type='button' class='icon-button' aria-label='Close' onClick={() => { ref.current?.close() }}>×</button>
          </header>
          <div class='dialog-body'>{children}</div>
        </>
      )}
    </dialog>
  )
}

interface ConfirmProps {
  open: boolean
  title: string
  message: ComponentChildren
  confirmLabel: string
  onConfirm: () => void
  onCancel: () => void
}

export function ConfirmDialog ({ open, title, message, confirmLabel, onConfirm, onCancel }: ConfirmProps): JSX.Element {
  return (
    <Dialog open={open} title={title} onClose={onCancel} class='confirm'>
      <div class='confirm-message'>{message}</div>
      <div class='actions'>
        {/* The safe choice is first and focused: Enter does not delete. */}
        <button type='button' autoFocus onClick={onCancel}>Cancel</button>
        <button type='button' class='danger' onClick={onConfirm}>{confirmLabel}</button>
      </div>
    </Dialog>
  )
}

/** The one modal that asks the guard's questions (guard.ts ask): leave unsaved work, bulk actions. */
export function ConfirmHost (): JSX.Element {
  const [pending, setPending] = useState<{ question: Question, answer: (yes: boolean) => void } | null>(null)
  useEffect(() => {
    setAsker(async question => await new Promise<boolean>(resolve => { setPending({ question, answer: resolve }) }))
    return () => { setAsker(null) }
  }, [])
  const settle = (yes: boolean): void => {
    pending?.answer(yes)
    setPending(null)
  }
  return (
    <ConfirmDialog
      open={pending !== null}
      title={pending?.question.title ?? ''}
      message={pending?.question.message ?? ''}
      confirmLabel={pending?.question.confirmLabel ?? 'OK'}
      onConfirm={() => { settle(true) }}
      onCancel={() => { settle(false) }}
    />
  )
}

/** A problem list at the top of a form: focused when it appears, each item links to its field. */
export function ErrorSummary ({ title, errors, fieldId }: { title: string, errors: string[], fieldId?: (message: string) => string | null }): JSX.Element | null {
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => { if (errors.length > 0) ref.current?.focus() }, [errors])
  if (errors.length === 0) return null
  return (
    <div class='error-summary' role='alert' tabIndex={-1} ref={ref}>
      <h2>{title}</h2>
      <ul>
        {errors.map((message, i) => {
          const id = fieldId?.(message) ?? null
          return (
            <li key={i}>
              {id === null
                ? message
                : <a href={`#${id}`} onClick={e => { e.preventDefault(); focusField(id) }}>{message}</a>}
            </li>
          )
        })}
      </ul>
    </div>
  )
}

/** Focuses a field by id, or the first focusable element inside a group with that id. */
export function focusField (id: string): void {
  const el = document.getElementById(id)
  if (el === null) return
  const target = el.matches('input, select, textarea, button')
    ? el
    : el.querySelector<HTMLElement>('input, select, textarea, button') ?? el
  target.scrollIntoView({ block: 'center' })
  target.focus()
}

export function formatBytes (size: number): string {
  if (size < 1024) return `${size} B`
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`
  return `${(size / 1024 / 1024).toFixed(1)} MB`
}

export function formatDate (iso: string | undefined): string {
  if (iso === undefined) return ''
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString()
}

/** The browser's time zone, as IANA names it (`Europe/Paris`): every time shown is in it. */
export function timeZoneName (): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone
}

export function StatusBadge ({ status }: { status: string }): JSX.Element {
  return <span class={`badge status-${status}`}>{status}</span>
}

/** A stable id from a dotted path, for `for`/`id` pairs and error links. */
export const fieldId = (path: string): string => 'field-' + path.replace(/[^A-Za-z0-9_-]/g, '-')
