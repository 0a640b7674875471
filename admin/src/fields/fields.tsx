// One input per field type of contract §5, generated from the resolved schema. Every input is
// labelled, described by its hint and its errors, and marked invalid when the server says so.
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { renderMarkdown } from '../markdown.js'
import { fieldLabel } from '../schema.js'
import type { FieldDefinition } from '../types.js'
import { fieldId } from '../ui.js'
import { AssetInput } from './asset.js'
import { ReferenceInput } from './reference.js'
import { childPath, fromLocalInput, isRecord, toLocalInput, useForm } from './form.js'

export interface FieldProps {
  name: string
  def: FieldDefinition
  path: string
  value: unknown
  onChange: (value: unknown) => void
  /** Overrides the label derived from the name (array items). */
  label?: string
}

/** The controls of one field: its id and what describes it. */
export interface Control {
  id: string
  describedBy: string | undefined
  invalid: boolean
  disabled: boolean
}

export function FieldList ({ fields, value, onChange, path }: { fields: Record<string, FieldDefinition>, value: unknown, onChange: (value: Record<string, unknown>) => void, path: string }): JSX.Element {
  const data = isRecord(value) ? value : {}
  return (
    <>
      {Object.entries(fields).map(([name, def]) => (
        <Field
          key={name} name={name} def={def} path={childPath(path, name)} value={data[name]}
          onChange={next => {
            const copy = { ...data }
            if (next === undefined) delete copy[name]
            else copy[name] = next
            onChange(copy)
          }}
        />
      ))}
    </>
  )
}

const GROUPS = new Set(['multiselect', 'object', 'array', 'asset', 'reference'])

export function Field (props: FieldProps): JSX.Element {
  const { name, def, path } = props
  const form = useForm()
  const id = fieldId(path)
  const errors = form.errors.get(path) ?? []
  const label = props.label ?? fieldLabel(name, def)
  const locked = def.readonly === true && !form.isNew
  const hints: string[] = []
  if (typeof def.description === 'string' && def.description !== '') hints.push(def.description)
  if (locked) hints.push('Read-only: set when the entry was created.')
  if (def.auto !== undefined && form.isNew) hints.push(def.auto === 'uuid' ? 'Left empty, a unique id is generated.' : 'Left empty, the current time is used.')
  const hintId = hints.length > 0 ? `${id}-hint` : undefined
  const errorId = errors.length > 0 ? `${id}-error` : undefined
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined
  const control: Control = { id, describedBy, invalid: errors.length > 0, disabled: form.disabled || locked }
  const group = GROUPS.has(def.field_type) || (def.field_type === 'boolean')
  const required = def.required === true ? <span class='required' aria-hidden='true'> *</span> : null

  const hint = hintId !== undefined && <p id={hintId} class='hint'>{hints.join(' ')}</p>
  const errorList = errorId !== undefined && (
    <div id={errorId} class='field-error'>
      {errors.map((e, i) => <p key={i}>{e}</p>)}
    </div>
  )
  const input = <FieldInput {...props} control={control} label={label} />

  if (def.field_type === 'boolean') {
    return (
      <div class={`field boolean ${errors.length > 0 ? 'has-error' : ''}`} data-path={path}>
        {input}
        {hint}
        {errorList}
      </div>
    )
  }
  if (group) {
    return (
      <fieldset class={`field group type-${def.field_type} ${errors.length > 0 ? 'has-error' : ''}`} id={`${id}-group`} data-path={path} aria-describedby={describedBy}>
        <legend>{label}{required}</legend>
        {hint}
        {errorList}
        {input}
      </fieldset>
    )
  }
  return (
    <div class={`field type-${def.field_type} ${errors.length > 0 ? 'has-error' : ''}`} data-path={path}>
      <label for={id}>{label}{required}</label>
      {hint}
      {input}
      {errorList}
    </div>
  )
}

const asString = (value: unknown): string => typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value)
const emptyToUndefined = (value: string): string | undefined => value === '' ? undefined : value

function FieldInput (props: FieldProps & { control: Control, label: string }): JSX.Element {
  const { def, value, onChange, control, path, label } = props
  const common = {
    id: control.id,
    'aria-describedby': control.describedBy,
    'aria-invalid': control.invalid,
    'aria-required': def.required === true
  }
  const form = useForm()
  switch (def.field_type) {
    case 'string':
    case 'email':
    case 'url':
    case 'slug': {
      // One element for three types; Preact's typings want a single literal type.
      const type = (def.field_type === 'email' ? 'email' : def.field_type === 'url' ? 'url' : 'text') as 'text'
      return (
        <input
          {...common} type={type} value={asString(value)} readOnly={control.disabled} maxLength={def.max_length}
          placeholder={def.auto !== undefined && form.isNew ? 'Generated automatically' : undefined}
          spellcheck={def.field_type === 'string'}
          onInput={e => { onChange(emptyToUndefined(e.currentTarget.value)) }}
        />
      )
    }
    case 'text':
      return <textarea {...common} rows={4} value={asString(value)} readOnly={control.disabled} maxLength={def.max_length} onInput={e => { onChange(emptyToUndefined(e.currentTarget.value)) }} />
    case 'markdown':
      return <MarkdownInput common={common} value={asString(value)} disabled={control.disabled} onChange={onChange} />
    case 'richtext':
      return <RichTextInput common={common} value={asString(value)} disabled={control.disabled} onChange={onChange} />
    case 'number':
    case 'integer':
      return <NumberInput common={common} def={def} value={value} disabled={control.disabled} onChange={onChange} />
    case 'boolean':
      return (
        <label class='check' for={control.id}>
          <input
            {...common} type='checkbox' checked={value === true} disabled={control.disabled}
            onChange={e => { onChange(e.currentTarget.checked) }}
          />
          <span>{label}{def.required === true && <span class='required' aria-hidden='true'> *</span>}</span>
        </label>
      )
    case 'date':
      return <input {...common} type='date' value={asString(value)} readOnly={control.disabled} onInput={e => { onChange(emptyToUndefined(e.currentTarget.value)) }} />
    case 'datetime':
      return <DateTimeInput common={common} value={value} disabled={control.disabled} onChange={onChange} />
    case 'color':
      return <ColorInput common={common} value={asString(value)} disabled={control.disabled} onChange={onChange} label={label} />
    case 'select':
      return <SelectInput common={common} def={def} value={value} disabled={control.disabled} onChange={onChange} />
    case 'multiselect':
      return <MultiSelectInput def={def} value={value} control={control} onChange={onChange} />
    case 'reference':
      return <ReferenceInput def={def} value={value} control={control} onChange={onChange} label={label} />
    case 'asset':
      return <AssetInput def={def} value={value} control={control} onChange={onChange} label={label} />
    case 'object':
      return (
        <div class='nested' id={control.id}>
          <FieldList fields={def.fields ?? {}} value={value} path={path} onChange={onChange} />
        </div>
      )
    case 'array':
      return <ArrayInput def={def} value={value} control={control} onChange={onChange} path={path} label={label} />
    case 'json':
      return <JsonInput common={common} value={value} disabled={control.disabled} onChange={onChange} path={path} />
    default:
      return <JsonInput common={common} value={value} disabled={control.disabled} onChange={onChange} path={path} />
  }
}

type Common = Record<string, unknown> & { id: string }

function MarkdownInput ({ common, value, disabled, onChange }: { common: Common, value: string, disabled: boolean, onChange: (v: unknown) => void }): JSX.Element {
  const [preview, setPreview] = useState(false)
  return (
    <div class='markdown'>
      <div class='editor-tabs'>
        <button type='button' aria-pressed={preview} aria-controls={preview ? `${common.id}-preview` : undefined} onClick={() => { setPreview(p => !p) }}>
          {preview ? 'Hide preview' : 'Show preview'}
        </button>
      </div>
      <div class={preview ? 'split' : ''}>
        <textarea {...common} rows={10} class='mono' value={value} readOnly={disabled} onInput={e => { onChange(emptyToUndefined(e.currentTarget.value)) }} />
        {preview && (
          <div
            id={`${common.id}-preview`} class='preview prose' role='region' aria-label='Markdown preview'
            // The renderer escapes everything and emits a fixed set of tags.
            dangerouslySetInnerHTML={{ __html: renderMarkdown(value) }}
          />
        )}
      </div>
    </div>
  )
}

function RichTextInput ({ common, value, disabled, onChange }: { common: Common, value: string, disabled: boolean, onChange: (v: unknown) => void }): JSX.Element {
  const [preview, setPreview] = useState(false)
  return (
    <div class='richtext'>
      <div class='editor-tabs'>
        <span class='hint'>HTML</span>
        <button type='button' aria-pressed={preview} onClick={() => { setPreview(p => !p) }}>{preview ? 'Hide preview' : 'Show preview'}</button>
      </div>
      <div class={preview ? 'split' : ''}>
        <textarea {...common} rows={10} class='mono' value={value} readOnly={disabled} onInput={e => { onChange(emptyToUndefined(e.currentTarget.value)) }} />
        {/* A sandbox without scripts or same-origin rights: the stored HTML cannot touch the admin. */}
        {preview && <iframe class='preview' title='Rich text preview' sandbox='' srcdoc={value} />}
      </div>
    </div>
  )
}

function NumberInput ({ common, def, value, disabled, onChange }: { common: Common, def: FieldDefinition, value: unknown, disabled: boolean, onChange: (v: unknown) => void }): JSX.Element {
  // The text is kept locally so "1." or "-" can be typed; the value follows when it parses.
  const [text, setText] = useState(typeof value === 'number' ? String(value) : '')
  useEffect(() => {
    if (typeof value === 'number' && Number(text) !== value) setText(String(value))
    if (value === undefined && text !== '' && !Number.isNaN(Number(text))) setText('')
  }, [value])
  return (
    <input
      {...common} type='number' inputMode={def.field_type === 'integer' ? 'numeric' : 'decimal'}
      step={def.field_type === 'integer' ? 1 : 'any'} min={def.min} max={def.max} value={text} readOnly={disabled}
      onInput={e => {
        const raw = e.currentTarget.value
        setText(raw)
        if (raw === '') onChange(undefined)
        else if (Number.isFinite(Number(raw))) onChange(Number(raw))
      }}
    />
  )
}

function DateTimeInput ({ common, value, disabled, onChange }: { common: Common, value: unknown, disabled: boolean, onChange: (v: unknown) => void }): JSX.Element {
  return (
    <div class='inline'>
      <input {...common} type='datetime-local' step={1} value={toLocalInput(value)} readOnly={disabled} onInput={e => { onChange(fromLocalInput(e.currentTarget.value)) }} />
      {!disabled && <button type='button' onClick={() => { onChange(fromLocalInput(toLocalInput(new Date().toISOString()))) }}>Now</button>}
    </div>
  )
}

function ColorInput ({ common, value, disabled, onChange, label }: { common: Common, value: string, disabled: boolean, onChange: (v: unknown) => void, label: string }): JSX.Element {
  const valid = /^#[0-9a-fA-F]{6}$/.test(value)
  return (
    <div class='inline color'>
      <input
        type='color' aria-label={`${label}: colour picker`} value={valid ? value.toLowerCase() : '#000000'} disabled={disabled}
        onInput={e => { onChange(e.currentTarget.value) }}
      />
      <input {...common} type='text' class='mono' placeholder='#rrggbb' value={value} readOnly={disabled} maxLength={7} onInput={e => { onChange(emptyToUndefined(e.currentTarget.value)) }} />
    </div>
  )
}

function SelectInput ({ common, def, value, disabled, onChange }: { common: Common, def: FieldDefinition, value: unknown, disabled: boolean, onChange: (v: unknown) => void }): JSX.Element {
  const options = def.options ?? []
  const index = options.findIndex(o => o === value)
  return (
    <select
      {...common} disabled={disabled} value={index === -1 ? '' : String(index)}
      onChange={e => {
        const i = e.currentTarget.value
        // Options keep their type (numbers stay numbers): the index selects the original.
        onChange(i === '' ? undefined : options[Number(i)])
      }}
    >
      <option value=''>{def.required === true ? 'Choose…' : '— None —'}</option>
      {options.map((o, i) => <option key={i} value={String(i)}>{String(o)}</option>)}
      {index === -1 && value !== undefined && value !== null && <option value='' disabled>{`${String(value)} (not an option)`}</option>}
    </select>
  )
}

function MultiSelectInput ({ def, value, control, onChange }: { def: FieldDefinition, value: unknown, control: Control, onChange: (v: unknown) => void }): JSX.Element {
  const options = def.options ?? []
  const chosen = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]
  return (
    <div class='choices' id={control.id}>
      {options.map((option, i) => {
        const checked = chosen.includes(option)
        return (
          <label class='check' key={i}>
            <input
              type='checkbox' checked={checked} disabled={control.disabled} aria-invalid={control.invalid}
              onChange={() => {
                // Kept in the order of `options`, as the server normalizes it.
                const next = options.filter(o => o === option ? !checked : chosen.includes(o))
                onChange(next.length === 0 ? undefined : next)
              }}
            />
            <span>{String(option)}</span>
          </label>
        )
      })}
    </div>
  )
}

function JsonInput ({ common, value, disabled, onChange, path }: { common: Common, value: unknown, disabled: boolean, onChange: (v: unknown) => void, path: string }): JSX.Element {
  const form = useForm()
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value, null, 2))
  const [problem, setProblem] = useState<string | null>(null)
  const last = useRef(value)
  useEffect(() => {
    // A value set from outside (a reload after save) replaces the text.
    if (value !== last.current) {
      last.current = value
      setText(value === undefined ? '' : JSON.stringify(value, null, 2))
      setProblem(null)
      form.setLocalError(path, null)
    }
  }, [value])
  useEffect(() => () => { form.setLocalError(path, null) }, [path])
  return (
    <div class='json'>
      <textarea
        {...common} rows={6} class='mono' value={text} readOnly={disabled} spellcheck={false}
        aria-invalid={problem !== null || common['aria-invalid'] === true}
        aria-describedby={[common['aria-describedby'], problem !== null ? `${common.id}-json` : undefined].filter(Boolean).join(' ') || undefined}
        onInput={e => {
          const raw = e.currentTarget.value
          setText(raw)
          if (raw.trim() === '') {
            setProblem(null)
            form.setLocalError(path, null)
            last.current = undefined
            onChange(undefined)
            return
          }
          try {
            const parsed: unknown = JSON.parse(raw)
            setProblem(null)
            form.setLocalError(path, null)
            last.current = parsed
            onChange(parsed)
          } catch (err) {
            const message = `Not valid JSON: ${err instanceof Error ? err.message : String(err)}`
            setProblem(message)
            form.setLocalError(path, message)
          }
        }}
      />
      {problem !== null ? <p id={`${common.id}-json`} class='field-error'>{problem}</p> : <p class='hint'>Any JSON value.</p>}
    </div>
  )
}

function ArrayInput ({ def, value, control, onChange, path, label }: { def: FieldDefinition, value: unknown, control: Control, onChange: (v: unknown) => void, path: string, label: string }): JSX.Element {
  const items = Array.isArray(value) ? value : []
  const itemDef: FieldDefinition = def.items ?? { field_type: 'json' }
  // Stable keys so inputs with their own state (JSON text, previews) follow their item on reorder.
  const keys = useRef<number[]>([])
  const nextKey = useRef(0)
  while (keys.current.length < items.length) keys.current.push(nextKey.current++)
  if (keys.current.length > items.length) keys.current.length = items.length
  const list = useRef<HTMLOListElement>(null)
  const [focusAfter, setFocusAfter] = useState<{ index: number, action: string } | null>(null)

  useEffect(() => {
    if (focusAfter === null) return
    const item = list.current?.querySelector<HTMLElement>(`[data-index="${focusAfter.index}"]`)
    const target = focusAfter.action === 'first'
      ? item?.querySelector<HTMLElement>('input, select, textarea, button')
      // A move to the top or the bottom disables that button: focus its twin, never the page.
      : item?.querySelector<HTMLElement>(`[data-action="${focusAfter.action}"]:not(:disabled)`) ?? item?.querySelector<HTMLElement>('button:not(:disabled)')
    target?.focus()
    setFocusAfter(null)
  }, [focusAfter])

  const update = (next: unknown[]): void => { onChange(next.length === 0 ? undefined : next) }
  const move = (from: number, to: number): void => {
    const next = [...items]
    const [item] = next.splice(from, 1)
    next.splice(to, 0, item)
    const k = [...keys.current]
    const [key] = k.splice(from, 1)
    k.splice(to, 0, key ?? nextKey.current++)
    keys.current = k
    update(next)
    setFocusAfter({ index: to, action: from < to ? 'down' : 'up' })
  }
  const itemLabel = (i: number): string => `${typeof itemDef.label === 'string' && itemDef.label !== '' ? itemDef.label : 'Item'} ${i + 1}`

  return (
    <div class='array' id={control.id}>
      {items.length === 0 && <p class='muted'>No items.</p>}
      <ol ref={list} class='array-items'>
        {items.map((item, i) => (
          <li key={keys.current[i]} data-index={i} class='array-item'>
            <Field
              name={String(i)} label={itemLabel(i)} def={itemDef} path={childPath(path, i)} value={item}
              onChange={next => { const copy = [...items]; copy[i] = next; update(copy) }}
            />
            {!control.disabled && (
              <div class='item-actions'>
                <button type='button' data-action='up' disabled={i === 0} aria-label={`Move ${itemLabel(i)} of ${label} up`} onClick={() => { move(i, i - 1) }}>↑</button>
                <button type='button' data-action='down' disabled={i === items.length - 1} aria-label={`Move ${itemLabel(i)} of ${label} down`} onClick={() => { move(i, i + 1) }}>↓</button>
                <button
                  type='button' class='danger-text' data-action='remove' aria-label={`Remove ${itemLabel(i)} of ${label}`}
                  onClick={() => {
                    keys.current.splice(i, 1)
                    update(items.filter((_x, j) => j !== i))
                    setFocusAfter(items.length > 1 ? { index: Math.max(0, i - 1), action: 'remove' } : null)
                  }}
                >
                  Remove
                </button>
              </div>
            )}
          </li>
        ))}
      </ol>
      {!control.disabled && (
        <AddButton
          label={label.toLowerCase()}
          onAdd={() => {
            update([...items, itemDef.field_type === 'object' ? {} : itemDef.default !== undefined ? structuredClone(itemDef.default) : undefined])
            setFocusAfter({ index: items.length, action: 'first' })
          }}
        />
      )}
    </div>
  )
}

/** Its name is its visible text (WCAG 2.5.3: speech users say what they see). */
function AddButton ({ label, onAdd }: { label: string, onAdd: () => void }): JSX.Element {
  return <button type='button' class='add' onClick={onAdd}><span aria-hidden='true'>+ </span>Add {label} item</button>
}
