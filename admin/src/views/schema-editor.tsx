// The schema editor: schema settings and a field editor for every type and attribute of
// contract §5, nested objects and array items included. The server validates; its 422
// messages are shown at the top and beside the field they name.
import type { JSX } from 'preact'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { ApiError, api, describeError, seg } from '../api.js'
import { useApp } from '../context.js'
import { messagePath, placeMessages } from '../fields/form.js'
import { FIELD_TYPES, type FieldDefinition, type FieldType, type ResolvedSchema, type SchemaDefinition } from '../types.js'
import { ErrorSummary } from '../ui.js'

const TEXT_TYPES = new Set<FieldType>(['string', 'text', 'markdown', 'richtext', 'email', 'url', 'slug'])
const NOT_SCALAR = new Set<FieldType>(['multiselect', 'object', 'array', 'json'])

/** Which attributes apply to a field of this type (and its `multiple`). */
function applies (attr: string, def: FieldDefinition): boolean {
  const t = def.field_type
  switch (attr) {
    case 'field_type': case 'required': case 'default': case 'readonly': case 'label': case 'description': return true
    case 'unique': return !NOT_SCALAR.has(t) && !(t === 'reference' && def.multiple === true)
    case 'auto': return t === 'string' || t === 'datetime'
    case 'min_length': case 'max_length': case 'pattern': return TEXT_TYPES.has(t)
    case 'min': case 'max': return t === 'number' || t === 'integer'
    case 'options': return t === 'select' || t === 'multiselect'
    case 'min_items': case 'max_items': return t === 'multiselect' || t === 'array' || (t === 'reference' && def.multiple === true)
    case 'collection': case 'multiple': return t === 'reference'
    case 'accept': return t === 'asset'
    case 'fields': return t === 'object'
    case 'items': return t === 'array'
    default: return false
  }
}

/** Drops attributes that do not apply (after a type change) and empty values. */
function cleanDef (def: FieldDefinition): FieldDefinition {
  const out: Record<string, unknown> = {}
  for (const [attr, value] of Object.entries(def)) {
    if (value === undefined || value === '' || !applies(attr, def)) continue
    if ((attr === 'required' || attr === 'readonly' || attr === 'unique' || attr === 'multiple') && value === false) continue
    if (attr === 'fields' && typeof value === 'object' && value !== null) {
      out.fields = Object.fromEntries(Object.entries(value as Record<string, FieldDefinition>).map(([k, v]) => [k, cleanDef(v)]))
    } else if (attr === 'items' && typeof value === 'object' && value !== null) {
      out.items = cleanDef(value as FieldDefinition)
    } else {
      out[attr] = value
    }
  }
  return out as unknown as FieldDefinition
}

function withType (def: FieldDefinition, type: FieldType, collections: string[]): FieldDefinition {
  const next: FieldDefinition = { ...def, field_type: type }
  if (type === 'object' && next.fields === undefined) next.fields = {}
  if (type === 'array' && next.items === undefined) next.items = { field_type: 'string' }
  if (type === 'reference' && next.collection === undefined) next.collection = collections[0] ?? ''
  if ((type === 'select' || type === 'multiselect') && next.options === undefined) next.options = []
  // A default of another type would only earn a 422.
  if (def.field_type !== type) delete next.default
  return next
}

interface Row { key: number, name: string, def: FieldDefinition }

let rowKeys = 0
const toRows = (fields: Record<string, FieldDefinition> | undefined): Row[] =>
  Object.entries(fields ?? {}).map(([name, def]) => ({ key: rowKeys++, name, def }))
const fromRows = (rows: Row[]): Record<string, FieldDefinition> =>
  Object.fromEntries(rows.map(r => [r.name.trim(), cleanDef(r.def)]))

interface Settings {
  name: string
  label: string
  description: string
  extends: string
  strict: boolean
  reusable: boolean
  tags: string
  category: string
  display_field: string
  default_sort: string
  default_order: '' | 'asc' | 'desc'
}

function settingsOf (schema: SchemaDefinition | null): Settings {
  const parents = schema?.extends
  return {
    name: schema?.name ?? '',
    label: schema?.label ?? '',
    description: schema?.description ?? '',
    extends: parents === undefined || parents === null ? '' : Array.isArray(parents) ? parents.join(', ') : parents,
    strict: schema?.strict === true,
    reusable: schema?.reusable === true,
    tags: (schema?.tags ?? []).join(', '),
    category: schema?.category ?? '',
    display_field: schema?.display_field ?? '',
    default_sort: schema?.default_sort ?? '',
    default_order: schema?.default_order ?? ''
  }
}

const list = (text: string): string[] => text.split(',').map(s => s.trim()).filter(s => s !== '')

/** A schema written in JSON Schema notation has no `fields` map: edit what the server resolved. */
function isNative (raw: SchemaDefinition | null): boolean {
  return raw === null || (typeof raw.fields === 'object' && raw.fields !== null)
}

interface EditorProps {
  initial: SchemaDefinition | null
  resolved: ResolvedSchema | null
  names: string[]
  onSaved: (schema: SchemaDefinition) => void
}

export function SchemaEditor ({ initial, resolved, names, onSaved }: EditorProps): JSX.Element {
  const { collections } = useApp()
  const isNew = initial === null
  const native = isNative(initial)
  const [settings, setSettings] = useState<Settings>(() => settingsOf(initial))
  const [rows, setRows] = useState<Row[]>(() => toRows(native ? initial?.fields : resolved?.fields))
  const [messages, setMessages] = useState<string[]>([])
  const [saving, setSaving] = useState(false)
  const [openRow, setOpenRow] = useState<number | null>(null)
  const collectionNames = (collections ?? []).map(c => c.name)

  const set = <K extends keyof Settings>(key: K, value: Settings[K]): void => { setSettings(s => ({ ...s, [key]: value })) }

  const body = (): SchemaDefinition => {
    const parents = list(settings.extends)
    const out: SchemaDefinition = { name: settings.name.trim(), fields: fromRows(rows) }
    if (settings.label.trim() !== '') out.label = settings.label.trim()
    if (settings.description.trim() !== '') out.description = settings.description.trim()
    if (parents.length > 0) out.extends = parents.length === 1 ? parents[0] : parents
    if (settings.strict) out.strict = true
    if (!isNew && settings.reusable) out.reusable = true
    if (list(settings.tags).length > 0) out.tags = list(settings.tags)
    if (settings.category.trim() !== '') out.category = settings.category.trim()
    if (settings.display_field !== '') out.display_field = settings.display_field
    if (settings.default_sort !== '') out.default_sort = settings.default_sort
    if (settings.default_order !== '') out.default_order = settings.default_order
    return out
  }

  // Where server messages go: rows are addressed as `fields.<name>`, nested as `.fields.<child>` / `.items`.
  const rowPaths = useMemo(() => {
    const out = new Set<string>(['name', 'extends', 'display_field', 'default_sort', 'default_order', 'label', 'description', 'tags', 'category', 'strict', 'reusable'])
    const walk = (fields: Record<string, FieldDefinition>, prefix: string): void => {
      for (const [name, def] of Object.entries(fields)) {
        out.add(`${prefix}${name}`)
        if (def.fields !== undefined) walk(def.fields, `${prefix}${name}.fields.`)
        if (def.items !== undefined) out.add(`${prefix}${name}.items`)
        if (def.items?.fields !== undefined) walk(def.items.fields, `${prefix}${name}.items.fields.`)
      }
    }
    walk(fromRows(rows), 'fields.')
    return out
  }, [rows])
  const topNames = new Set(rows.map(r => r.name.trim()))
  const normalized = messages.map(m => {
    // "title: unknown field type" and "fields.title: ..." both name the field `title`.
    const parsed = messagePath(m)
    if (parsed === null) return m
    const head = parsed.path.split('.')[0] ?? ''
    return !parsed.path.startsWith('fields.') && topNames.has(head) && !rowPaths.has(parsed.path) ? `fields.${parsed.path}: ${parsed.text}` : m
  })
  const placed = placeMessages(normalized, rowPaths)

  const save = async (): Promise<void> => {
    const problems: string[] = []
    const seen = new Set<string>()
    for (const row of rows) {
      const n = row.name.trim()
      if (n === '') problems.push('fields: every field needs a name.')
      else if (seen.has(n)) problems.push(`fields.${n}: two fields have this name.`)
      seen.add(n)
    }
    if (!/^[a-z0-9_]{1,64}$/.test(settings.name.trim())) problems.push('name: 1 to 64 lowercase letters, digits or underscores.')
    if (problems.length > 0) { setMessages(problems); return }
    setSaving(true)
    setMessages([])
    try {
      const definition = body()
      const saved = isNew
        ? await api.post<SchemaDefinition>('/api/schemas', definition)
        : await api.put<SchemaDefinition>(`/api/schemas/${seg(initial.name)}`, definition)
      onSaved(saved)
    } catch (err) {
      setMessages(err instanceof ApiError && err.errors.length > 0 ? err.errors : [describeError(err)])
    } finally {
      setSaving(false)
    }
  }

  const fieldNames = rows.map(r => r.name.trim()).filter(n => n !== '')
  const settingError = (key: string): JSX.Element | null => {
    const errors = placed.get(key)
    return errors === undefined ? null : <div id={`schema-${key}-error`} class='field-error'>{errors.map((e, i) => <p key={i}>{e}</p>)}</div>
  }
  const summaryTarget = (message: string): string | null => {
    const parsed = messagePath(message)
    if (parsed === null) return null
    if (parsed.path === 'name') return 'schema-name'
    const head = parsed.path.replace(/^fields\./, '').split('.')[0]
    const row = rows.find(r => r.name.trim() === head)
    return row === undefined ? null : `sf-${row.key}-name`
  }

  return (
    <form class='schema-form' noValidate onSubmit={e => { e.preventDefault(); void save() }} aria-label={isNew ? 'New schema' : `Schema ${initial.name}`}>
      <ErrorSummary title='The schema was not saved' errors={messages} fieldId={summaryTarget} />
      {!native && <p class='notice info'>This schema file is written in JSON Schema notation. Saving writes it in Lectern's own notation with the fields below.</p>}
      <fieldset class='settings'>
        <legend>Settings</legend>
        <div class='grid-2'>
          <div class={`field ${placed.has('name') ? 'has-error' : ''}`}>
            <label for='schema-name'>Name<span class='required' aria-hidden='true'> *</span></label>
            <input
              id='schema-name' value={settings.name} readOnly={!isNew} aria-required='true' spellcheck={false}
              aria-describedby='schema-name-hint' aria-invalid={placed.has('name')}
              onInput={e => { set('name', e.currentTarget.value) }}
            />
            <p id='schema-name-hint' class='hint'>{isNew ? 'Lowercase letters, digits and _; also the collection\'s name in URLs.' : 'The name cannot change.'}</p>
            {settingError('name')}
          </div>
          <div class='field'>
            <label for='schema-label'>Label</label>
            <input id='schema-label' value={settings.label} onInput={e => { set('label', e.currentTarget.value) }} />
          </div>
        </div>
        <div class='field'>
          <label for='schema-description'>Description</label>
          <input id='schema-description' value={settings.description} onInput={e => { set('description', e.currentTarget.value) }} />
        </div>
        <div class='grid-2'>
          <div class={`field ${placed.has('extends') ? 'has-error' : ''}`}>
            <label for='schema-extends'>Extends</label>
            <input
              id='schema-extends' list='schema-names' value={settings.extends} aria-describedby='schema-extends-hint'
              onInput={e => { set('extends', e.currentTarget.value) }}
            />
            <datalist id='schema-names'>{names.filter(n => n !== settings.name).map(n => <option key={n} value={n} />)}</datalist>
            <p id='schema-extends-hint' class='hint'>Parent schemas, comma-separated, in order (parents' fields come first).</p>
            {settingError('extends')}
          </div>
          <div class='field'>
            <label for='schema-category'>Category</label>
            <input id='schema-category' value={settings.category} onInput={e => { set('category', e.currentTarget.value) }} />
          </div>
        </div>
        <div class='grid-2'>
          <div class='field'>
            <label for='schema-tags'>Tags</label>
            <input id='schema-tags' value={settings.tags} aria-describedby='schema-tags-hint' onInput={e => { set('tags', e.currentTarget.value) }} />
            <p id='schema-tags-hint' class='hint'>Comma-separated.</p>
          </div>
          <div class='field'>
            <label for='schema-display'>Title field</label>
            <select id='schema-display' value={settings.display_field} onChange={e => { set('display_field', e.currentTarget.value) }}>
              <option value=''>Automatic</option>
              {fieldNames.map(n => <option key={n} value={n}>{n}</option>)}
              {settings.display_field !== '' && !fieldNames.includes(settings.display_field) && <option value={settings.display_field}>{settings.display_field} (inherited)</option>}
            </select>
          </div>
        </div>
        <div class='grid-2'>
          <div class='field'>
            <label for='schema-sort'>Default sort</label>
            <select id='schema-sort' value={settings.default_sort} onChange={e => { set('default_sort', e.currentTarget.value) }}>
              <option value=''>None</option>
              {['_created_at', '_updated_at', '_slug', ...fieldNames].map(n => <option key={n} value={n}>{n}</option>)}
              {settings.default_sort !== '' && !['_created_at', '_updated_at', '_slug', ...fieldNames].includes(settings.default_sort) && <option value={settings.default_sort}>{settings.default_sort} (inherited)</option>}
            </select>
          </div>
          <div class='field'>
            <label for='schema-order'>Default order</label>
            <select id='schema-order' value={settings.default_order} onChange={e => { set('default_order', e.currentTarget.value as Settings['default_order']) }}>
              <option value=''>Not set (descending)</option>
              <option value='asc'>Ascending</option>
              <option value='desc'>Descending</option>
            </select>
          </div>
        </div>
        <label class='check'>
          <input type='checkbox' checked={settings.strict} onChange={e => { set('strict', e.currentTarget.checked) }} />
          <span>Strict: reject fields the schema does not define</span>
        </label>
        {!isNew && (
          <label class='check'>
            <input type='checkbox' checked={settings.reusable} onChange={e => { set('reusable', e.currentTarget.checked) }} />
            <span>Reusable partial: not a collection, only extended by others</span>
          </label>
        )}
      </fieldset>

      <fieldset class='fields-editor'>
        <legend>Fields</legend>
        {!native && resolved !== null && <p class='hint'>Inherited fields are part of this list because the file does not separate them.</p>}
        <FieldRows
          rows={rows} onChange={setRows} prefix='fields.' placed={placed} collections={collectionNames}
          openRow={openRow} setOpenRow={setOpenRow}
        />
      </fieldset>

      <details class='json-preview'>
        <summary>JSON to be saved</summary>
        <pre class='code'>{JSON.stringify(body(), null, 2)}</pre>
      </details>

      <div class='form-actions'>
        <button type='submit' class='primary' disabled={saving}>{saving ? 'Saving…' : isNew ? 'Create schema' : 'Save schema'}</button>
      </div>
    </form>
  )
}

interface RowsProps {
  rows: Row[]
  onChange: (rows: Row[]) => void
  /** The message path of these rows' parent (`fields.`, `fields.layout.fields.`). */
  prefix: string
  placed: Map<string, string[]>
  collections: string[]
  openRow: number | null
  setOpenRow: (key: number | null) => void
}

function FieldRows ({ rows, onChange, prefix, placed, collections, openRow, setOpenRow }: RowsProps): JSX.Element {
  const [focusKey, setFocusKey] = useState<{ key: number, part: string } | null>(null)
  const listRef = useRef<HTMLOListElement>(null)
  useEffect(() => {
    if (focusKey === null) return
    document.getElementById(`sf-${focusKey.key}-${focusKey.part}`)?.focus()
    setFocusKey(null)
  }, [focusKey])

  const update = (key: number, change: Partial<Row>): void => { onChange(rows.map(r => r.key === key ? { ...r, ...change } : r)) }
  const move = (index: number, to: number, part: string): void => {
    const next = [...rows]
    const [row] = next.splice(index, 1)
    if (row === undefined) return
    next.splice(to, 0, row)
    onChange(next)
    setFocusKey({ key: row.key, part })
  }

  return (
    <>
      {rows.length === 0 && <p class='muted'>No fields yet.</p>}
      <ol class='field-rows' ref={listRef}>
        {rows.map((row, i) => {
          const path = `${prefix}${row.name.trim()}`
          const errors = placed.get(path) ?? []
          const nestedErrors = [...placed.keys()].some(p => p.startsWith(`${path}.`))
          const open = openRow === row.key || errors.length > 0 || nestedErrors || row.name === ''
          const id = `sf-${row.key}`
          return (
            <li key={row.key} class={`field-row ${errors.length > 0 ? 'has-error' : ''}`}>
              <div class='row-head'>
                <div class='field compact'>
                  <label for={`${id}-name`}>Field name</label>
                  <input
                    id={`${id}-name`} value={row.name} spellcheck={false} aria-invalid={errors.length > 0}
                    aria-describedby={errors.length > 0 ? `${id}-error` : undefined}
                    onInput={e => { update(row.key, { name: e.currentTarget.value }) }}
                  />
                </div>
                <div class='field compact'>
                  <label for={`${id}-type`}>Type</label>
                  <select id={`${id}-type`} value={row.def.field_type} onChange={e => { update(row.key, { def: withType(row.def, e.currentTarget.value as FieldType, collections) }) }}>
                    {FIELD_TYPES.map(t => <option key={t} value={t}>{t}</option>)}
                  </select>
                </div>
                <label class='check compact'>
                  <input type='checkbox' checked={row.def.required === true} onChange={e => { update(row.key, { def: { ...row.def, required: e.currentTarget.checked } }) }} />
                  <span>Required</span>
                </label>
                <div class='row-actions'>
                  <button type='button' aria-expanded={open} aria-controls={`${id}-attrs`} onClick={() => { setOpenRow(open ? null : row.key) }}>
                    {open ? 'Fewer options' : 'More options'}<span class='visually-hidden'> for {row.name === '' ? `field ${i + 1}` : row.name}</span>
                  </button>
                  <button type='button' id={`${id}-up`} disabled={i === 0} aria-label={`Move ${row.name === '' ? `field ${i + 1}` : row.name} up`} onClick={() => { move(i, i - 1, 'up') }}>↑</button>
                  <button type='button' id={`${id}-down`} disabled={i === rows.length - 1} aria-label={`Move ${row.name === '' ? `field ${i + 1}` : row.name} down`} onClick={() => { move(i, i + 1, 'down') }}>↓</button>
                  <button type='button' class='danger-text' aria-label={`Remove field ${row.name === '' ? i + 1 : row.name}`} onClick={() => { onChange(rows.filter(r => r.key !== row.key)) }}>Remove</button>
                </div>
              </div>
              {errors.length > 0 && <div id={`${id}-error`} class='field-error'>{errors.map((e, j) => <p key={j}>{e}</p>)}</div>}
              <div id={`${id}-attrs`} hidden={!open}>
                {open && (
                  <FieldAttributes
                    idPrefix={id} def={row.def} path={path} placed={placed} collections={collections}
                    onChange={def => { update(row.key, { def }) }}
                  />
                )}
              </div>
            </li>
          )
        })}
      </ol>
      <button
        type='button' class='add'
        onClick={() => {
          const row: Row = { key: rowKeys++, name: '', def: { field_type: 'string' } }
          onChange([...rows, row])
          setOpenRow(row.key)
          setFocusKey({ key: row.key, part: 'name' })
        }}
      >
        + Add field
      </button>
    </>
  )
}

interface AttrProps {
  idPrefix: string
  def: FieldDefinition
  path: string
  placed: Map<string, string[]>
  collections: string[]
  onChange: (def: FieldDefinition) => void
}

const numberOrUndefined = (text: string): number | undefined => text.trim() === '' || !Number.isFinite(Number(text)) ? undefined : Number(text)

/** The attributes of one field definition that apply to its type. */
function FieldAttributes ({ idPrefix, def, path, placed, collections, onChange }: AttrProps): JSX.Element {
  const set = (attr: keyof FieldDefinition, value: unknown): void => { onChange({ ...def, [attr]: value }) }
  const id = (attr: string): string => `${idPrefix}-${attr}`
  const text = (attr: 'label' | 'description' | 'pattern', label: string, hint?: string): JSX.Element => (
    <div class='field compact'>
      <label for={id(attr)}>{label}</label>
      <input id={id(attr)} value={def[attr] ?? ''} aria-describedby={hint !== undefined ? `${id(attr)}-hint` : undefined} onInput={e => { set(attr, e.currentTarget.value === '' ? undefined : e.currentTarget.value) }} />
      {hint !== undefined && <p id={`${id(attr)}-hint`} class='hint'>{hint}</p>}
    </div>
  )
  const number = (attr: 'min' | 'max' | 'min_length' | 'max_length' | 'min_items' | 'max_items', label: string): JSX.Element => (
    <div class='field compact'>
      <label for={id(attr)}>{label}</label>
      <input id={id(attr)} type='number' step='any' value={def[attr] ?? ''} onInput={e => { set(attr, numberOrUndefined(e.currentTarget.value)) }} />
    </div>
  )
  const check = (attr: 'readonly' | 'unique' | 'multiple', label: string): JSX.Element => (
    <label class='check compact'>
      <input type='checkbox' checked={def[attr] === true} onChange={e => { set(attr, e.currentTarget.checked) }} />
      <span>{label}</span>
    </label>
  )

  return (
    <div class='attributes'>
      <div class='grid-2'>
        {text('label', 'Label')}
        {text('description', 'Description', 'Shown under the field in the entry form.')}
      </div>
      <div class='checks'>
        {check('readonly', 'Read-only after creation')}
        {applies('unique', def) && check('unique', 'Unique in the collection')}
        {applies('multiple', def) && check('multiple', 'Multiple entries')}
      </div>
      {applies('auto', def) && (
        <div class='field compact'>
          <label for={id('auto')}>Generated value</label>
          <select id={id('auto')} value={def.auto ?? ''} onChange={e => { set('auto', e.currentTarget.value === '' ? undefined : e.currentTarget.value) }}>
            <option value=''>None</option>
            <option value='uuid'>uuid: a random id</option>
            <option value='now'>now: the creation time</option>
          </select>
        </div>
      )}
      {applies('min_length', def) && (
        <div class='grid-3'>
          {number('min_length', 'Min length')}
          {number('max_length', 'Max length')}
          {text('pattern', 'Pattern', 'A JavaScript regular expression.')}
        </div>
      )}
      {applies('min', def) && <div class='grid-2'>{number('min', 'Minimum')}{number('max', 'Maximum')}</div>}
      {applies('min_items', def) && <div class='grid-2'>{number('min_items', 'Min items')}{number('max_items', 'Max items')}</div>}
      {applies('options', def) && <OptionsEditor id={id('options')} options={def.options ?? []} onChange={o => { set('options', o) }} />}
      {applies('collection', def) && (
        <div class='field compact'>
          <label for={id('collection')}>Target collection<span class='required' aria-hidden='true'> *</span></label>
          <select id={id('collection')} value={def.collection ?? ''} onChange={e => { set('collection', e.currentTarget.value) }}>
            <option value=''>Choose…</option>
            {collections.map(c => <option key={c} value={c}>{c}</option>)}
            {def.collection !== undefined && def.collection !== '' && !collections.includes(def.collection) && <option value={def.collection}>{def.collection}</option>}
          </select>
        </div>
      )}
      {applies('accept', def) && (
        <div class='field compact'>
          <label for={id('accept')}>Accepted types</label>
          <input
            id={id('accept')} aria-describedby={`${id('accept')}-hint`}
            value={def.accept === undefined ? '' : Array.isArray(def.accept) ? def.accept.join(', ') : def.accept}
            onInput={e => { const l = list(e.currentTarget.value); set('accept', l.length === 0 ? undefined : l.length === 1 ? l[0] : l) }}
          />
          <p id={`${id('accept')}-hint`} class='hint'>MIME patterns, comma-separated, e.g. image/*.</p>
        </div>
      )}
      <DefaultEditor id={id('default')} def={def} onChange={v => { set('default', v) }} />
      {def.field_type === 'object' && (
        <fieldset class='nested-fields'>
          <legend>Fields of this object</legend>
          <NestedRows
            fields={def.fields ?? {}} prefix={`${path}.fields.`} placed={placed} collections={collections}
            onChange={fields => { set('fields', fields) }}
          />
        </fieldset>
      )}
      {def.field_type === 'array' && (
        <fieldset class='nested-fields'>
          <legend>Each item</legend>
          {(placed.get(`${path}.items`) ?? []).map((e, i) => <p key={i} class='field-error'>{e}</p>)}
          <div class='field compact'>
            <label for={id('items-type')}>Item type</label>
            <select
              id={id('items-type')} value={def.items?.field_type ?? 'string'}
              onChange={e => { set('items', withType(def.items ?? { field_type: 'string' }, e.currentTarget.value as FieldType, collections)) }}
            >
              {FIELD_TYPES.map(t => <option key={t} value={t}>{t}</option>)}
            </select>
          </div>
          <FieldAttributes
            idPrefix={`${idPrefix}-items`} def={def.items ?? { field_type: 'string' }} path={`${path}.items`} placed={placed}
            collections={collections} onChange={items => { set('items', items) }}
          />
        </fieldset>
      )}
    </div>
  )
}

/** Nested rows keep their own keys across renders; the parent only sees the field map. */
function NestedRows ({ fields, prefix, placed, collections, onChange }: { fields: Record<string, FieldDefinition>, prefix: string, placed: Map<string, string[]>, collections: string[], onChange: (fields: Record<string, FieldDefinition>) => void }): JSX.Element {
  const [rows, setRows] = useState<Row[]>(() => toRows(fields))
  const [openRow, setOpenRow] = useState<number | null>(null)
  return (
    <FieldRows
      rows={rows} prefix={prefix} placed={placed} collections={collections} openRow={openRow} setOpenRow={setOpenRow}
      onChange={next => {
        setRows(next)
        // Unnamed rows stay in the editor until they get a name.
        onChange(Object.fromEntries(next.filter(r => r.name.trim() !== '').map(r => [r.name.trim(), r.def])))
      }}
    />
  )
}

function OptionsEditor ({ id, options, onChange }: { id: string, options: Array<string | number>, onChange: (options: Array<string | number>) => void }): JSX.Element {
  const [textValue, setTextValue] = useState(options.map(String).join('\n'))
  const [numeric, setNumeric] = useState(options.length > 0 && options.every(o => typeof o === 'number'))
  const parse = (raw: string, asNumbers: boolean): Array<string | number> => raw.split('\n').map(s => s.trim()).filter(s => s !== '')
    .map(s => asNumbers && Number.isFinite(Number(s)) ? Number(s) : s)
  return (
    <div class='field compact'>
      <label for={id}>Options<span class='required' aria-hidden='true'> *</span></label>
      <textarea id={id} rows={4} value={textValue} aria-describedby={`${id}-hint`} onInput={e => { setTextValue(e.currentTarget.value); onChange(parse(e.currentTarget.value, numeric)) }} />
      <p id={`${id}-hint`} class='hint'>One value per line.</p>
      <label class='check'>
        <input type='checkbox' checked={numeric} onChange={e => { setNumeric(e.currentTarget.checked); onChange(parse(textValue, e.currentTarget.checked)) }} />
        <span>Values are numbers</span>
      </label>
    </div>
  )
}

/** The default value, typed like the field: a checkbox state, a number, an option, text or JSON. */
function DefaultEditor ({ id, def, onChange }: { id: string, def: FieldDefinition, onChange: (value: unknown) => void }): JSX.Element {
  const t = def.field_type
  const [jsonText, setJsonText] = useState(def.default === undefined ? '' : JSON.stringify(def.default))
  const [jsonError, setJsonError] = useState<string | null>(null)
  if (t === 'boolean') {
    return (
      <div class='field compact'>
        <label for={id}>Default</label>
        <select id={id} value={def.default === undefined ? '' : String(def.default)} onChange={e => { const v = e.currentTarget.value; onChange(v === '' ? undefined : v === 'true') }}>
          <option value=''>None</option><option value='true'>true</option><option value='false'>false</option>
        </select>
      </div>
    )
  }
  if (t === 'number' || t === 'integer') {
    return (
      <div class='field compact'>
        <label for={id}>Default</label>
        <input id={id} type='number' step='any' value={typeof def.default === 'number' ? def.default : ''} onInput={e => { onChange(numberOrUndefined(e.currentTarget.value)) }} />
      </div>
    )
  }
  if (t === 'select') {
    const options = def.options ?? []
    const index = options.findIndex(o => o === def.default)
    return (
      <div class='field compact'>
        <label for={id}>Default</label>
        <select id={id} value={index === -1 ? '' : String(index)} onChange={e => { const v = e.currentTarget.value; onChange(v === '' ? undefined : options[Number(v)]) }}>
          <option value=''>None</option>
          {options.map((o, i) => <option key={i} value={String(i)}>{String(o)}</option>)}
        </select>
      </div>
    )
  }
  if (t === 'multiselect' || t === 'object' || t === 'array' || t === 'json' || (t === 'reference' && def.multiple === true)) {
    return (
      <div class='field compact'>
        <label for={id}>Default (JSON)</label>
        <input
          id={id} class='mono' value={jsonText} aria-invalid={jsonError !== null} aria-describedby={jsonError !== null ? `${id}-error` : undefined}
          onInput={e => {
            const raw = e.currentTarget.value
            setJsonText(raw)
            if (raw.trim() === '') { setJsonError(null); onChange(undefined); return }
            try {
              onChange(JSON.parse(raw))
              setJsonError(null)
            } catch {
              setJsonError('Not valid JSON: the default is unchanged.')
            }
          }}
        />
        {jsonError !== null && <p id={`${id}-error`} class='field-error'>{jsonError}</p>}
      </div>
    )
  }
  return (
    <div class='field compact'>
      <label for={id}>Default</label>
      <input
        id={id} type={(t === 'date' ? 'date' : 'text') as 'text'} value={typeof def.default === 'string' ? def.default : ''}
        onInput={e => { onChange(e.currentTarget.value === '' ? undefined : e.currentTarget.value) }}
      />
    </div>
  )
}
