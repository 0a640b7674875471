// The types directory on disk: `<name>.json5` and `<name>.json` files (`.json5` wins), written
// atomically. Names are checked before they become paths, so nothing escapes the directory.
import { readdir, readFile, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { fsyncDir, isTempFile, writeFileAtomic } from '../durable.js'
import { isSchemaName } from './rules.js'

export const SCHEMA_EXTENSIONS = ['.json5', '.json'] as const
export type SchemaExtension = (typeof SCHEMA_EXTENSIONS)[number]

const SCHEMA_FILE_RE = /^([a-z0-9_]{1,64})\.(json5|json)$/

const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'ENOENT'

export interface Listing {
  /** Schema name → the file in use (`.json5` when both exist). */
  files: Map<string, string>
  /** File names that look like schema files but have an invalid name. */
  ignored: string[]
}

export class SchemaFiles {
  /** `syncDir` flushes the directory's entries (a seam for tests; fsync by default). */
  constructor (readonly dir: string, private readonly syncDir: (dir: string) => Promise<void> = fsyncDir) {}

  private pathOf (name: string, ext: SchemaExtension): string {
    if (!isSchemaName(name)) throw new Error(`invalid schema name ${JSON.stringify(name)}`)
    return path.join(this.dir, `${name}${ext}`)
  }

  /** `<name>.json` in the types directory (where POST writes). */
  jsonPath (name: string): string {
    return this.pathOf(name, '.json')
  }

  async list (): Promise<Listing> {
    const files = new Map<string, string>()
    const ignored: string[] = []
    const entries = await readdir(this.dir, { withFileTypes: true })
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isFile() || entry.name.startsWith('.')) continue
      if (!/\.json5?$/.test(entry.name)) continue
      const m = SCHEMA_FILE_RE.exec(entry.name)
      if (m === null || m[1] === undefined) {
        ignored.push(entry.name)
        continue
      }
      const name = m[1]
      if (m[2] === 'json5' || !files.has(name)) files.set(name, path.join(this.dir, entry.name))
    }
    return { files, ignored }
  }

  /** The file in use for `name` (`.json5` first), or null when neither exists. */
  async locate (name: string): Promise<string | null> {
    for (const ext of SCHEMA_EXTENSIONS) {
      const file = this.pathOf(name, ext)
      try {
        if ((await stat(file)).isFile()) return file
      } catch (err) {
        if (!isMissing(err)) throw err
      }
    }
    return null
  }

  /** The text of the file in use for `name`, or null when neither exists. */
  async read (name: string): Promise<{ file: string, text: string } | null> {
    for (const ext of SCHEMA_EXTENSIONS) {
      const file = this.pathOf(name, ext)
      try {
        return { file, text: await readFile(file, 'utf8') }
      } catch (err) {
        if (!isMissing(err)) throw err
      }
    }
    return null
  }

  /** Pretty-printed JSON (two spaces, trailing newline), written atomically. JSON is valid JSON5. */
  async write (file: string, document: unknown): Promise<void> {
    await writeFileAtomic(file, `${JSON.stringify(document, null, 2)}\n`)
  }

  /**
   * Removes both `<name>.json5` and `<name>.json`, durably: the directory is fsynced before it
   * resolves, as every write is, so an answered delete survives a crash. False when neither existed.
   */
  async remove (name: string): Promise<boolean> {
    let removed = false
    for (const ext of SCHEMA_EXTENSIONS) {
      try {
        await unlink(this.pathOf(name, ext))
        removed = true
      } catch (err) {
        if (!isMissing(err)) throw err
      }
    }
    if (removed) await this.syncDir(this.dir)
    return removed
  }

  /** Removes temp files left by a write that was interrupted (a crash between open and rename). */
  async removeStaleTempFiles (): Promise<number> {
    let removed = 0
    for (const entry of await readdir(this.dir)) {
      if (!isTempFile(entry)) continue
      await unlink(path.join(this.dir, entry)).catch(() => {})
      removed++
    }
    return removed
  }
}
