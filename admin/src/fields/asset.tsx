// Asset fields: a `/api/assets/...` path, uploaded here or chosen from the library.
import type { JSX } from 'preact'
import { useRef, useState } from 'preact/hooks'
import { api, assetPathOf, assetRef, assetUrl, describeError, thumbnailUrl } from '../api.js'
import { scopeQuery } from '../context.js'
import type { FieldDefinition } from '../types.js'
import { Dialog } from '../ui.js'
import { AssetBrowser } from '../views/assets.js'
import { useForm } from './form.js'
import type { Control } from './fields.js'

/** `accept` as the file input wants it, and as a MIME prefix for the library filter. */
export function acceptOf (def: FieldDefinition): { attr: string | undefined, mimePrefix: string | undefined } {
  const list = def.accept === undefined ? [] : Array.isArray(def.accept) ? def.accept : [def.accept]
  const prefixes = new Set(list.map(p => p.endsWith('/*') ? p.slice(0, -1) : p))
  return {
    attr: list.length === 0 ? undefined : list.join(','),
    mimePrefix: prefixes.size === 1 ? [...prefixes][0] : undefined
  }
}

interface Props {
  def: FieldDefinition
  value: unknown
  control: Control
  onChange: (value: unknown) => void
  label: string
}

export function AssetInput ({ def, value, control, onChange, label }: Props): JSX.Element {
  const form = useForm()
  const environment = form.scope.environment
  const current = typeof value === 'string' && value !== '' ? value : null
  const [picking, setPicking] = useState(false)
  const [status, setStatus] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [broken, setBroken] = useState(false)
  const file = useRef<HTMLInputElement>(null)
  const { attr, mimePrefix } = acceptOf(def)
  const thumb = current === null || broken ? null : thumbnailUrl(current, 240, environment)
  const name = current === null ? null : decodeURIComponent((assetPathOf(current) ?? current).split('/').pop() ?? current)

  const upload = async (files: FileList | null): Promise<void> => {
    const chosen = files?.[0]
    if (chosen === undefined) return
    setError(null)
    setStatus(`Uploading ${chosen.name}…`)
    try {
      const [asset] = await api.upload([chosen], '', scopeQuery(form.scope))
      if (asset === undefined) throw new Error('The server stored no file.')
      setBroken(false)
      onChange(assetRef(asset))
      setStatus(`Uploaded ${asset.name}.`)
    } catch (err) {
      setStatus('')
      setError(describeError(err))
    } finally {
      if (file.current !== null) file.current.value = ''
    }
  }

  return (
    <div class='asset-field' id={control.id}>
      <div class='asset-current'>
        {current === null && <span class='muted'>No file</span>}
        {current !== null && thumb !== null && (
          <img class='thumb' src={thumb} alt={`${label}: ${name ?? ''}`} width={120} height={120} onError={() => { setBroken(true) }} />
        )}
        {current !== null && (
          <a href={assetUrl(current, environment)} target='_blank' rel='noreferrer' class='asset-name'>{name}</a>
        )}
      </div>
      {!control.disabled && (
        <div class='actions'>
          <input
            ref={file} type='file' class='visually-hidden' id={`${control.id}-file`} accept={attr} tabIndex={-1}
            aria-label={`Upload a file for ${label}`}
            onChange={e => { void upload(e.currentTarget.files) }}
          />
          <button type='button' aria-describedby={control.describedBy} onClick={() => { file.current?.click() }}>Upload…</button>
          <button type='button' onClick={() => { setPicking(true) }}>Choose from library…</button>
          {current !== null && <button type='button' class='danger-text' onClick={() => { onChange(undefined) }}>Remove</button>}
        </div>
      )}
      <p class='hint' role='status'>{status}</p>
      {error !== null && <p class='field-error' role='alert'>{error}</p>}
      <Dialog open={picking} title={`Choose ${label.toLowerCase()}`} onClose={() => { setPicking(false) }} class='wide'>
        {picking && (
          <AssetBrowser
            mimePrefix={mimePrefix}
            onPick={asset => {
              setPicking(false)
              setBroken(false)
              onChange(assetRef(asset))
            }}
          />
        )}
      </Dialog>
    </div>
  )
}
