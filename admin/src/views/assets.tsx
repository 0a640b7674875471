// The asset library: folders, search, type filter, upload by picker or drag and drop,
// thumbnails through /api/transform, details and delete. The same browser is the picker of
// asset fields.
import type { JSX } from 'preact'
import { useRef, useState } from 'preact/hooks'
import { api, assetRef, assetUrl, describeError, thumbnailUrl } from '../api.js'
import { scopeQuery, useApp } from '../context.js'
import { setQuery, useRoute } from '../router.js'
import { canWriteContent } from '../session.js'
import type { Asset, ListEnvelope } from '../types.js'
import { Dialog, Loading, PageTitle, Problem, formatBytes, formatDate, useDebounced, useLoad } from '../ui.js'

const PER_PAGE = 48
const KINDS = [
  { value: '', label: 'All types' },
  { value: 'image/', label: 'Images' },
  { value: 'video/', label: 'Video' },
  { value: 'audio/', label: 'Audio' },
  { value: 'application/', label: 'Documents' },
  { value: 'text/', label: 'Text' }
]

export function AssetLibrary (): JSX.Element {
  const route = useRoute()
  const folder = route.query.get('folder')
  return (
    <>
      <PageTitle title='Assets'>Assets</PageTitle>
      <AssetBrowser folder={folder} onFolder={f => { setQuery({ folder: f, page: null }, { replace: false }) }} />
    </>
  )
}

interface BrowserProps {
  /** Limit to a MIME prefix (an asset field's `accept`). */
  mimePrefix?: string
  /** Picker mode: choosing a card calls this instead of opening the details. */
  onPick?: (asset: Asset) => void
  /** Controlled folder (the library page keeps it in the URL); null is "all folders". */
  folder?: string | null
  onFolder?: (folder: string | null) => void
}

export function AssetBrowser ({ mimePrefix, onPick, folder: controlledFolder, onFolder }: BrowserProps): JSX.Element {
  const { scope, session, notify } = useApp()
  const canWrite = canWriteContent(session.role)
  const [localFolder, setLocalFolder] = useState<string | null>(null)
  const folder = controlledFolder !== undefined ? controlledFolder : localFolder
  const chooseFolder = (f: string | null): void => {
    setPage(1)
    if (onFolder !== undefined) onFolder(f)
    else setLocalFolder(f)
  }
  const [search, setSearch] = useState('')
  const q = useDebounced(search, 300)
  const [kind, setKind] = useState(mimePrefix ?? '')
  const [page, setPage] = useState(1)
  const [selected, setSelected] = useState<Asset | null>(null)
  const [dragging, setDragging] = useState(false)
  const [uploading, setUploading] = useState<string | null>(null)
  const [uploadError, setUploadError] = useState<string | null>(null)
  const [newFolder, setNewFolder] = useState('')
  const fileInput = useRef<HTMLInputElement>(null)
  const dragDepth = useRef(0)
  const scopeKey = `${scope.environment ?? ''}`

  const list = useLoad(async signal => await api.get<ListEnvelope<Asset>>('/api/assets', {
    _environment: scope.environment, folder: folder ?? undefined, mime: kind, _q: q, _page: page, _per_page: PER_PAGE
  }, signal), [folder, kind, q, page, scopeKey], { keep: true })

  // Folders exist through their files: gather them from the whole library.
  const folders = useLoad(async signal => {
    const all = await api.get<ListEnvelope<Asset>>('/api/assets', { _environment: scope.environment, _per_page: 1000 }, signal)
    return [...new Set(all.items.map(a => a.folder).filter(f => typeof f === 'string' && f !== ''))].sort()
  }, [scopeKey])

  const upload = async (files: File[]): Promise<void> => {
    if (files.length === 0) return
    setUploadError(null)
    setUploading(files.length === 1 ? `Uploading ${files[0]?.name ?? 'file'}…` : `Uploading ${files.length} files…`)
    try {
      const stored = await api.upload(files, folder ?? '', scopeQuery(scope))
      notify(stored.length === 1 ? `Uploaded ${stored[0]?.name ?? 'file'}.` : `Uploaded ${stored.length} files.`)
      list.reload()
      folders.reload()
      const first = stored[0]
      if (onPick !== undefined && stored.length === 1 && first !== undefined) onPick(first)
    } catch (err) {
      setUploadError(describeError(err))
    } finally {
      setUploading(null)
      if (fileInput.current !== null) fileInput.current.value = ''
    }
  }

  const onDrop = (event: DragEvent): void => {
    event.preventDefault()
    dragDepth.current = 0
    setDragging(false)
    if (!canWrite) return
    void upload(Array.from(event.dataTransfer?.files ?? []))
  }

  const result = list.data
  const folderList = folders.data ?? []
  if (folder !== null && folder !== '' && !folderList.includes(folder)) folderList.push(folder)

  return (
    <div class={`asset-browser ${onPick !== undefined ? 'picking' : ''}`}>
      <div class='asset-layout'>
        <nav class='folders' aria-label='Folders'>
          <h2>Folders</h2>
          <ul class='nav-list'>
            <li><button type='button' class='link-button' aria-current={folder === null ? 'true' : undefined} onClick={() => { chooseFolder(null) }}>All files</button></li>
            {folderList.map(f => (
              <li key={f}><button type='button' class='link-button' aria-current={folder === f ? 'true' : undefined} onClick={() => { chooseFolder(f) }}>{f}</button></li>
            ))}
          </ul>
          {canWrite && (
            <form class='new-folder' onSubmit={e => { e.preventDefault(); const name = newFolder.trim(); if (name !== '') { chooseFolder(name); setNewFolder('') } }}>
              <label for={`new-folder${onPick !== undefined ? '-pick' : ''}`}>New folder</label>
              <div class='inline'>
                <input id={`new-folder${onPick !== undefined ? '-pick' : ''}`} value={newFolder} onInput={e => { setNewFolder(e.currentTarget.value) }} />
                <button type='submit'>Open</button>
              </div>
            </form>
          )}
        </nav>

        <section
          class={`dropzone ${dragging ? 'dragging' : ''}`} aria-label='Files'
          onDragEnter={e => { if (canWrite) { e.preventDefault(); dragDepth.current++; setDragging(true) } }}
          onDragOver={e => { if (canWrite) e.preventDefault() }}
          onDragLeave={() => { if (--dragDepth.current <= 0) { dragDepth.current = 0; setDragging(false) } }}
          onDrop={onDrop}
        >
          <div class='toolbar'>
            <div class='control grow'>
              <label for='asset-search'>Search files</label>
              <input id='asset-search' type='search' value={search} onInput={e => { setPage(1); setSearch(e.currentTarget.value) }} />
            </div>
            {mimePrefix === undefined && (
              <div class='control'>
                <label for='asset-kind'>Type</label>
                <select id='asset-kind' value={kind} onChange={e => { setPage(1); setKind(e.currentTarget.value) }}>
                  {KINDS.map(k => <option key={k.value} value={k.value}>{k.label}</option>)}
                </select>
              </div>
            )}
            {canWrite && (
              <div class='control'>
                <input
                  ref={fileInput} id='asset-upload' type='file' aria-label='Files to upload' multiple class='visually-hidden' tabIndex={-1}
                  accept={mimePrefix !== undefined ? `${mimePrefix}*` : undefined}
                  onChange={e => { void upload(Array.from(e.currentTarget.files ?? [])) }}
                />
                <button type='button' class='primary' onClick={() => { fileInput.current?.click() }}>Upload files…</button>
              </div>
            )}
          </div>
          {canWrite && (
            <p class='hint'>
              {dragging ? 'Drop to upload' : 'Drop files here to upload them'}
              {folder !== null && folder !== '' ? <> into <strong>{folder}</strong></> : null}.
            </p>
          )}
          <p role='status' class='hint'>{uploading ?? ''}</p>
          {uploadError !== null && <p role='alert' class='field-error'>{uploadError}</p>}
          {list.error !== null && <Problem error={list.error} retry={list.reload} />}
          {list.loading && result === undefined && <Loading />}
          {result !== undefined && (
            <>
              <p class='muted'>{result.total === 0 ? 'No files here yet.' : `${result.total} ${result.total === 1 ? 'file' : 'files'}`}</p>
              <ul class='asset-grid'>
                {result.items.map(asset => {
                  const thumb = thumbnailUrl(assetRef(asset), 240, scope.environment, asset.mime)
                  return (
                    <li key={asset.path}>
                      <button
                        type='button' class='asset-card'
                        onClick={() => { if (onPick !== undefined) onPick(asset); else setSelected(asset) }}
                      >
                        {thumb !== null
                          ? <img src={thumb} alt='' loading='lazy' width={120} height={120} />
                          : <span class='file-icon' aria-hidden='true'>{(asset.name.split('.').pop() ?? 'file').slice(0, 4).toUpperCase()}</span>}
                        {/* The name is the visible text, with what the button does in front (WCAG 2.5.3). */}
                        <span class='asset-card-name'><span class='visually-hidden'>{onPick !== undefined ? 'Choose' : 'Details of'} </span>{asset.name}</span>
                        <span class='muted'>{formatBytes(asset.size)}</span>
                      </button>
                    </li>
                  )
                })}
              </ul>
              {result.pages > 1 && (
                <nav class='pager' aria-label='Pages'>
                  <button type='button' disabled={page <= 1} onClick={() => { setPage(p => p - 1) }}>Previous</button>
                  <span>Page {result.page} of {result.pages}</span>
                  <button type='button' disabled={page >= result.pages} onClick={() => { setPage(p => p + 1) }}>Next</button>
                </nav>
              )}
            </>
          )}
        </section>
      </div>
      <Dialog open={selected !== null} title={selected?.name ?? 'File'} onClose={() => { setSelected(null) }} class='wide'>
        {selected !== null && (
          <AssetDetails
            asset={selected} canDelete={canWrite}
            onDeleted={() => {
              notify(`Deleted ${selected.name}.`)
              setSelected(null)
              list.reload()
              folders.reload()
            }}
          />
        )}
      </Dialog>
    </div>
  )
}

function AssetDetails ({ asset, canDelete, onDeleted }: { asset: Asset, canDelete: boolean, onDeleted: () => void }): JSX.Element {
  const { scope } = useApp()
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [copied, setCopied] = useState(false)
  const ref = assetRef(asset)
  const preview = thumbnailUrl(ref, 800, scope.environment, asset.mime)
  const remove = async (): Promise<void> => {
    try {
      await api.delete(ref, scopeQuery(scope))
      onDeleted()
    } catch (err) {
      setError(describeError(err))
    }
  }
  return (
    <div class='asset-details'>
      {preview !== null && <img class='preview-image' src={preview} alt={asset.name} />}
      <dl class='meta'>
        <dt>Folder</dt><dd>{asset.folder === '' ? '(root)' : asset.folder}</dd>
        <dt>Path</dt><dd><code>{ref}</code></dd>
        <dt>Type</dt><dd>{asset.mime}</dd>
        <dt>Size</dt><dd>{formatBytes(asset.size)}</dd>
        {asset.width !== null && asset.height !== null && <><dt>Dimensions</dt><dd>{asset.width} × {asset.height} px</dd></>}
        <dt>Uploaded</dt><dd>{formatDate(asset.created_at)}</dd>
      </dl>
      <div class='actions'>
        <a class='button' href={assetUrl(ref, scope.environment)} target='_blank' rel='noreferrer'>Open original</a>
        <button
          type='button'
          onClick={() => {
            navigator.clipboard.writeText(asset.url).then(() => { setCopied(true) }, () => { setCopied(false) })
          }}
        >
          Copy URL
        </button>
        <span role='status' class='hint'>{copied ? 'URL copied.' : ''}</span>
        {canDelete && !confirming && <button type='button' class='danger' onClick={() => { setConfirming(true) }}>Delete…</button>}
      </div>
      {confirming && (
        <div class='confirm-inline' role='group' aria-label='Confirm delete'>
          <p>Delete <strong>{asset.name}</strong>? Entries that use it will point at a missing file.</p>
          <div class='actions'>
            <button type='button' autoFocus onClick={() => { setConfirming(false) }}>Cancel</button>
            <button type='button' class='danger' onClick={() => { void remove() }}>Delete file</button>
          </div>
        </div>
      )}
      {error !== null && <p role='alert' class='field-error'>{error}</p>}
    </div>
  )
}
