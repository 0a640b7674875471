// An entry's history (contract §13): its kept versions, newest first, a side-by-side comparison of
// any two (or of one with the current entry), field by field, and restore. The API records no
// author (keys are anonymous), so each version says what it knows: its number, status and time.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, describeError, isNotFound, seg } from '../api.js'
import { scopeQuery, useApp } from '../context.js'
import { diffFields } from '../diff.js'
import { ask } from '../guard.js'
import { entryTitle, displayField, fieldLabel } from '../schema.js'
import type { Entry, ListEnvelope, ResolvedSchema, VersionSummary } from '../types.js'
import { Dialog, Loading, StatusBadge, formatDate, timeZoneName, useLoad } from '../ui.js'

const PAGE = 10
/** The versions offered in the comparison's pickers: CMS_REVISIONS keeps 50 by default. */
const PICKABLE = 100
type Side = number | 'current'

interface HistoryProps {
  schema: ResolvedSchema
  /** The live entry as the editor holds it; the list reloads when it changes. */
  entry: Entry
  hasDraft: boolean
  dirty: boolean
  canWrite: boolean
  onRestored: (entry: Entry) => void
}

export function History ({ schema, entry, hasDraft, dirty, canWrite, onRestored }: HistoryProps): JSX.Element {
  const { scope } = useApp()
  const [page, setPage] = useState(1)
  const [compare, setCompare] = useState<number | null>(null)
  const path = `/api/content/${seg(schema.name)}/${seg(entry._slug)}/versions`
  const versions = useLoad(async signal => await api.get<ListEnvelope<VersionSummary>>(path, { _page: page, _per_page: PAGE, ...scopeQuery(scope) }, signal),
    [path, page, scope.locale, scope.environment, entry._updated_at], { keep: true })
  const list = versions.data
  return (
    <section class='card history' aria-labelledby='history-heading'>
      <h2 id='history-heading'>History{list !== undefined && list.total > 0 ? ` (${list.total})` : ''}</h2>
      <p class='hint'>Times in {timeZoneName()}. The server records no author.</p>
      {versions.loading && list === undefined && <Loading />}
      {versions.error !== null && <p class='muted'>{describeError(versions.error)}</p>}
      {list !== undefined && list.items.length === 0 && <p class='muted'>No version is kept (CMS_REVISIONS is 0, or nothing was written yet).</p>}
      {list !== undefined && list.items.length > 0 && (
        <ol class='versions'>
          {list.items.map(v => (
            <li key={v.version}>
              <span class='version-line'>
                <strong>Version {v.version}</strong> <StatusBadge status={v.status} />
              </span>
              <span class='muted'>{formatDate(v.created_at)}</span>
              <button type='button' class='link-button' aria-label={`Compare version ${v.version}…`} onClick={() => { setCompare(v.version) }}>
                Compare…
              </button>
            </li>
          ))}
        </ol>
      )}
      {list !== undefined && list.pages > 1 && (
        <nav class='pager small' aria-label='History pages'>
          <button type='button' disabled={page <= 1} onClick={() => { setPage(p => p - 1) }}>Newer</button>
          <span>{page} of {list.pages}</span>
          <button type='button' disabled={page >= list.pages} onClick={() => { setPage(p => p + 1) }}>Older</button>
        </nav>
      )}
      <Dialog open={compare !== null} title='Compare versions' onClose={() => { setCompare(null) }} class='wide'>
        {compare !== null && (
          <Comparison
            schema={schema} entry={entry} initial={compare} hasDraft={hasDraft} dirty={dirty} canWrite={canWrite}
            onRestored={restored => { setCompare(null); onRestored(restored) }}
          />
        )}
      </Dialog>
    </section>
  )
}

function Comparison ({ schema, entry, initial, hasDraft, dirty, canWrite, onRestored }: Omit<HistoryProps, 'onRestored'> & { initial: number, onRestored: (entry: Entry) => void }): JSX.Element {
  const { scope, notify } = useApp()
  const [left, setLeft] = useState<Side>(initial)
  const [right, setRight] = useState<Side>('current')
  const [onlyChanged, setOnlyChanged] = useState(false)
  const [restoring, setRestoring] = useState(false)
  const base = `/api/content/${seg(schema.name)}/${seg(entry._slug)}`
  const choices = useLoad(async signal => await api.get<ListEnvelope<VersionSummary>>(`${base}/versions`, { _per_page: PICKABLE, ...scopeQuery(scope) }, signal), [base])
  const sideOf = async (side: Side, signal: AbortSignal): Promise<Entry> =>
    side === 'current' ? entry : await api.get<Entry>(`${base}/versions/${side}`, scopeQuery(scope), signal)
  const pair = useLoad(async signal => await Promise.all([sideOf(left, signal), sideOf(right, signal)]), [base, left, right, entry._updated_at])

  const name = (side: Side): string => side === 'current' ? 'Current entry' : `Version ${side}`
  const options = (
    <>
      <option value='current'>Current entry (live)</option>
      {(choices.data?.items ?? []).map(v => <option key={v.version} value={String(v.version)}>Version {v.version} · {v.status} · {formatDate(v.created_at)}</option>)}
      {/* The chosen version stays listed even beyond the pickers' first hundred. */}
      {typeof initial === 'number' && choices.data !== undefined && !choices.data.items.some(v => v.version === initial) && <option value={String(initial)}>Version {initial}</option>}
    </>
  )
  const parse = (value: string): Side => value === 'current' ? 'current' : Number(value)

  const restore = async (n: number): Promise<void> => {
    const yes = await ask({
      title: `Restore version ${n}?`,
      message: (
        <>
          <p>“{entryTitle(entry, displayField(schema))}” takes version {n}'s fields and status, as a new write (a new version is kept; the versions after it stay in the history).</p>
          {dirty && <p class='warning'><strong>Your unsaved edits will be lost.</strong></p>}
          {hasDraft && <p class='warning'><strong>The pending draft will be discarded</strong>, so that the editor shows the restored entry.</p>}
        </>
      ),
      confirmLabel: `Restore version ${n}`
    })
    if (!yes) return
    setRestoring(true)
    try {
      const restored = await api.post<Entry>(`${base}/versions/${n}/restore`, undefined, scopeQuery(scope))
      // The editor shows what is stored now, whatever becomes of the draft: a form left on the
      // old entry would save over the restore.
      onRestored(restored)
      notify(`Restored version ${n} of “${entryTitle(restored, displayField(schema))}” (${restored._status}).`)
      if (hasDraft) {
        try {
          await api.delete(`${base}/draft`, scopeQuery(scope))
        } catch (err) {
          if (!isNotFound(err)) notify(`Restored, but the pending draft was not discarded: ${describeError(err)}`, 'error')
        }
      }
    } catch (err) {
      notify(`Not restored: ${describeError(err)}`, 'error')
      setRestoring(false)
    }
  }

  const labelOf = (field: string): string => {
    const def = schema.fields[field]
    return field === '_status' ? 'Status' : def !== undefined ? fieldLabel(field, def) : field
  }
  const rows = pair.data === undefined ? [] : diffFields(pair.data[0], pair.data[1], Object.keys(schema.fields))
  const changed = rows.filter(r => r.changed).length
  const shown = onlyChanged ? rows.filter(r => r.changed) : rows
  return (
    <div class='comparison'>
      <div class='toolbar'>
        <div class='scope-field'>
          <label for='diff-left'>Compare</label>
          <select id='diff-left' value={String(left)} onChange={e => { setLeft(parse(e.currentTarget.value)) }}>{options}</select>
        </div>
        <div class='scope-field'>
          <label for='diff-right'>with</label>
          <select id='diff-right' value={String(right)} onChange={e => { setRight(parse(e.currentTarget.value)) }}>{options}</select>
        </div>
        <label class='check'>
          <input type='checkbox' checked={onlyChanged} onChange={e => { setOnlyChanged(e.currentTarget.checked) }} /> Only changed fields
        </label>
      </div>
      {pair.loading && pair.data === undefined && <Loading />}
      {pair.error !== null && <p class='problem' role='alert'>{describeError(pair.error)}</p>}
      {pair.data !== undefined && (
        <>
          <p role='status' class='diff-summary'>
            {name(left)} and {name(right).toLowerCase()}: {changed === 0 ? 'no field differs' : changed === 1 ? '1 field differs' : `${changed} fields differ`}.
          </p>
          <div class='diff-scroll'>
            <table class='diff'>
              <caption class='visually-hidden'>{name(left)} compared with {name(right).toLowerCase()}, field by field</caption>
              <thead>
                <tr>
                  <th scope='col'>Field</th>
                  <th scope='col'>{name(left)}{pair.data[0]._updated_at !== undefined ? <span class='muted'> · {formatDate(pair.data[0]._updated_at)}</span> : null}</th>
                  <th scope='col'>{name(right)}{pair.data[1]._updated_at !== undefined ? <span class='muted'> · {formatDate(pair.data[1]._updated_at)}</span> : null}</th>
                </tr>
              </thead>
              <tbody>
                {shown.map(row => (
                  <tr key={row.field} class={row.changed ? 'changed' : undefined}>
                    <th scope='row'>
                      {labelOf(row.field)}
                      {row.changed && <span class='change-mark'> (changed)</span>}
                    </th>
                    <td><pre>{row.left}</pre></td>
                    <td><pre>{row.right}</pre></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      {canWrite && (
        <div class='actions'>
          {[left, right].filter((side, i, all): side is number => side !== 'current' && all.indexOf(side) === i).map(n => (
            <button key={n} type='button' class='primary' disabled={restoring} onClick={() => { void restore(n) }}>
              {restoring ? 'Restoring…' : `Restore version ${n}…`}
            </button>
          ))}
        </div>
      )}
    </div>
  )
}
