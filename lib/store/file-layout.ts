// The file store's layout moves (contract §14, lib/store/layout.ts), run at open before anything
// is read. The layout the store last opened with is `content/layout.json` (layoutText). A move
// relabels folders: an environment's `<from>/<collection>/<locale>` folders go to `<to>/...`, a
// locale's `<environment>/<collection>/<from or _>` to `.../<to or _>`, each bucket folder with its
// entries, versions and drafts (one rename); schedules.json is relabelled too.
//
// Crash safety: the moves are written to `content/layout-journal.json` first (with an id), then
// applied, then layout.json is written and the journal removed. An open that finds the journal runs
// it again before anything else: every step is one that a second run finds done or does again
// (a rename whose source is gone is done; a merge of versions leaves lines marked with the
// journal's id, so it is never merged twice).
//
// A clash (the target already holds the slug, `mergeSlug`): the moved entry wins; the displaced
// entry becomes a version of the key numbered one above the target's highest, the moved entry's
// versions follow it (v → v + that number); the moved draft replaces the target's.
import { randomUUID } from 'node:crypto'
import { access, readdir, readFile, rename, rmdir } from 'node:fs/promises'
import path from 'node:path'
import { fsyncDir, isTempFile, removeFileDurably, writeFileAtomic } from '../durable.js'
import { layoutMoves, layoutText, parseLayout, type Layout, type LayoutMove } from './layout.js'
import { isCollectionName, isScopeName, isSlug } from './names.js'
import { DRAFTS_DIR, ENTRY_EXT, VERSIONS_DIR, VERSIONS_EXT, draftFile, localeDirName, makeDirs, versionsFile } from './file-paths.js'
import { extent, lineText, liveVersions, readVersions, type VersionLine } from './file-versions.js'
import { SCHEDULES_FILE, readScheduleLines, writeScheduleLines } from './file-schedules.js'
import type { StoreLogger } from './common.js'
import type { ChangeKey } from '../../types/changes.js'

export const LAYOUT_FILE = 'layout.json'
export const JOURNAL_FILE = 'layout-journal.json'

interface Journal {
  id: string
  moves: LayoutMove[]
  layout: string
}

/** An entry a move relabelled: where it was and where it is now. */
export interface MovedEntry {
  from: ChangeKey
  to: ChangeKey
}

/** What the moves at open did: each moved entry (first key to last), and how many clashed. */
export interface LayoutOutcome {
  moves: LayoutMove[]
  moved: MovedEntry[]
  clashes: number
}

/** One run of a journal: its id and what it moved so far, by the entry's current key. */
interface Run {
  root: string
  id: string
  moved: Map<string, MovedEntry>
  clashes: number
}

const keyText = (k: ChangeKey): string => `${k.environment}\u0000${k.collection}\u0000${k.locale ?? ''}\u0000${k.slug}`

async function readText (file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8')
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return null
    throw err
  }
}

async function subdirs (dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter(e => e.isDirectory()).map(e => e.name).sort()
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return []
    throw err
  }
}

async function exists (file: string): Promise<boolean> {
  return await access(file).then(() => true, () => false)
}

async function dirExists (dir: string): Promise<boolean> {
  try {
    await readdir(dir)
    return true
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return false
    throw err
  }
}

/**
 * Brings the content under `root` from the layout it was last opened with to `current`: finishes
 * a journal a crash left, then runs the moves the change of layout asks for (layoutMoves).
 */
export async function applyLayout (root: string, current: Layout, log: StoreLogger): Promise<LayoutOutcome> {
  const journalPath = path.join(root, JOURNAL_FILE)
  const layoutPath = path.join(root, LAYOUT_FILE)
  const run: Run = { root, id: '', moved: new Map(), clashes: 0 }
  const done: LayoutMove[] = []
  const left = await readText(journalPath)
  const journals: Journal[] = []
  if (left !== null) journals.push(JSON.parse(left) as Journal)
  const finish = async (journal: Journal): Promise<void> => {
    run.id = journal.id
    for (const move of journal.moves) await applyMove(run, move)
    await relabelSchedules(root, journal.moves)
    await writeFileAtomic(layoutPath, journal.layout)
    await removeFileDurably(journalPath)
    done.push(...journal.moves)
  }
  for (const journal of journals) await finish(journal)
  const previousText = await readText(layoutPath)
  const moves = layoutMoves(parseLayout(previousText), current)
  if (moves.length > 0) {
    const journal: Journal = { id: randomUUID(), moves, layout: layoutText(current) }
    await writeFileAtomic(journalPath, JSON.stringify(journal) + '\n')
    await finish(journal)
  } else if (previousText !== layoutText(current)) {
    await writeFileAtomic(layoutPath, layoutText(current))
  }
  const outcome = { moves: done, moved: [...run.moved.values()], clashes: run.clashes }
  if (done.length > 0) {
    log.info({ moves: done, entries: outcome.moved.length, clashes: outcome.clashes }, 'content moved to the new layout of locales and environments')
  }
  return outcome
}

async function applyMove (run: Run, move: LayoutMove): Promise<void> {
  const { root } = run
  if (move.dimension === 'environment') {
    const from = path.join(root, move.from)
    for (const collection of await subdirs(from)) {
      for (const locale of await subdirs(path.join(from, collection))) {
        const scope = (environment: string): ChangeKey => ({ environment, locale: locale === localeDirName(null) ? null : locale, collection, slug: '' })
        await moveBucket(run, path.join(from, collection, locale), path.join(root, move.to, collection, locale), scope(move.from), scope(move.to))
      }
      await removeDir(path.join(from, collection))
    }
    await removeDir(from)
    return
  }
  for (const environment of await subdirs(root)) {
    if (!isScopeName(environment)) continue
    for (const collection of await subdirs(path.join(root, environment))) {
      if (!isCollectionName(collection)) continue
      const dir = path.join(root, environment, collection)
      const label = (locale: string): ChangeKey => ({ environment, locale: locale === '' ? null : locale, collection, slug: '' })
      await moveBucket(run, path.join(dir, localeDirName(move.from)), path.join(dir, localeDirName(move.to)), label(move.from), label(move.to))
    }
  }
}

/** The slugs a bucket folder holds anything of: entries, versions, drafts. */
async function slugsIn (dir: string): Promise<{ entries: string[], all: string[] }> {
  const names = (sub: string, ext: string): Promise<string[]> => readdir(path.join(dir, sub)).then(
    list => list.filter(n => n.endsWith(ext) && !n.startsWith('.')).map(n => n.slice(0, -ext.length)).filter(isSlug),
    () => [])
  const entries = await names('', ENTRY_EXT)
  const all = new Set([...entries, ...await names(VERSIONS_DIR, VERSIONS_EXT), ...await names(DRAFTS_DIR, ENTRY_EXT)])
  return { entries, all: [...all].sort() }
}

/** Moves one bucket folder: renamed when the target has none, else merged slug by slug. */
async function moveBucket (run: Run, src: string, dst: string, from: ChangeKey, to: ChangeKey): Promise<void> {
  if (!await dirExists(src)) return
  const { entries, all } = await slugsIn(src)
  if (!await dirExists(dst)) {
    await makeDirs(run.root, path.dirname(dst))
    await rename(src, dst)
    await fsyncDir(path.dirname(dst))
    if (path.dirname(src) !== path.dirname(dst)) await fsyncDir(path.dirname(src))
  } else {
    for (const slug of all) await mergeSlug(run, src, dst, slug)
    for (const dir of [dst, path.join(dst, VERSIONS_DIR), path.join(dst, DRAFTS_DIR)]) if (await dirExists(dir)) await fsyncDir(dir)
    for (const dir of [path.join(src, VERSIONS_DIR), path.join(src, DRAFTS_DIR), src]) await removeDir(dir)
  }
  for (const slug of entries) noteMoved(run, { ...from, slug }, { ...to, slug })
}

function noteMoved (run: Run, from: ChangeKey, to: ChangeKey): void {
  // A key an earlier move of this run brought here keeps its first key: one tombstone, one upsert.
  const earlier = run.moved.get(keyText(from))
  if (earlier !== undefined) run.moved.delete(keyText(from))
  run.moved.set(keyText(to), { from: earlier?.from ?? from, to })
}

interface EntryDoc { status?: unknown, created_at?: unknown, updated_at?: unknown, version?: unknown, data?: unknown }

async function readEntryDoc (file: string): Promise<EntryDoc | null> {
  const text = await readText(file)
  if (text === null) return null
  try {
    return JSON.parse(text) as EntryDoc
  } catch {
    return {}
  }
}

/** One slug of a bucket merged into the target bucket (see the header). */
async function mergeSlug (run: Run, src: string, dst: string, slug: string): Promise<void> {
  const moved = await readEntryDoc(path.join(src, slug + ENTRY_EXT))
  const target = await readEntryDoc(path.join(dst, slug + ENTRY_EXT))
  const clash = moved !== null && target !== null
  const renumbered = await mergeVersions(run, src, dst, slug, moved, clash ? target : null)
  const draft = draftFile(src, slug)
  if (await exists(draft)) {
    await makeDirs(run.root, path.join(dst, DRAFTS_DIR))
    await rename(draft, draftFile(dst, slug))
  }
  if (moved === null) return
  const from = path.join(src, slug + ENTRY_EXT)
  if (renumbered && moved.version !== undefined) {
    // Its own version is in the merged file now, under another number: the file names none.
    await writeFileAtomic(path.join(dst, slug + ENTRY_EXT), JSON.stringify({ ...moved, version: undefined }, null, 2) + '\n')
    await removeFileDurably(from)
  } else {
    await rename(from, path.join(dst, slug + ENTRY_EXT))
  }
  if (clash) run.clashes++
}

/** The version an entry file is (file-versions.ts), as a line, when it names one its versions file lacks. */
function ownVersion (doc: EntryDoc | null, lines: readonly VersionLine[]): VersionLine[] {
  const version = doc?.version
  if (doc === null || !Number.isSafeInteger(version) || (version as number) <= extent(lines).highest) return []
  const line = asVersion(doc, version as number, undefined)
  return line === null ? [] : [line]
}

/**
 * The target's versions, then the displaced target entry (when it clashes), then the moved
 * entry's versions renumbered after them, in the target's versions file; marked with the run's
 * id, so a second run of the journal finds it done.
 */
async function mergeVersions (run: Run, src: string, dst: string, slug: string, moved: EntryDoc | null, displaced: EntryDoc | null): Promise<boolean> {
  const srcFile = versionsFile(src, slug)
  const dstFile = versionsFile(dst, slug)
  const dstLines = (await readVersions(dstFile)).lines
  if (dstLines.some(line => line.move === run.id)) {
    await removeFileDurably(srcFile)
    return true
  }
  const srcLines = (await readVersions(srcFile)).lines
  // Each side's newest version is its entry file: merged, it goes into the file like the others.
  const moving = [...srcLines, ...ownVersion(moved, srcLines)]
  const target = [...dstLines, ...ownVersion(displaced, dstLines)]
  if (target.length === 0 && displaced === null) {
    // Nothing to renumber after: the versions file moves as it is (the entry file still names its own).
    if (srcLines.length > 0) {
      await makeDirs(run.root, path.join(dst, VERSIONS_DIR))
      await rename(srcFile, dstFile)
    }
    return false
  }
  let highest = extent(target).highest
  const lines: VersionLine[] = liveVersions(target).reverse().map(line => ({ ...line, floor: 0 }))
  const kept = asVersion(displaced, highest + 1, run.id)
  if (kept !== null) lines.push(kept)
  if (displaced !== null) highest++
  for (const line of liveVersions(moving).reverse()) lines.push({ ...line, version: line.version + highest, floor: 0, move: run.id })
  if (lines.length > 0) {
    await makeDirs(run.root, path.join(dst, VERSIONS_DIR))
    await writeFileAtomic(dstFile, lines.map(lineText).join(''))
  }
  await removeFileDurably(srcFile)
  return true
}

/** An entry file's state as a version (null when it cannot be read as an entry: a displaced one is then lost). */
function asVersion (doc: EntryDoc | null, version: number, id: string | undefined): VersionLine | null {
  if (doc === null) return null
  const { status, created_at: createdAt, updated_at: updatedAt, data } = doc
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return null
  return {
    version,
    status: status === 'draft' ? 'draft' : 'published',
    created_at: typeof updatedAt === 'string' ? updatedAt : new Date(0).toISOString(),
    entry_created_at: typeof createdAt === 'string' ? createdAt : new Date(0).toISOString(),
    floor: 0,
    data: data as Record<string, unknown>,
    ...(id === undefined ? {} : { move: id })
  }
}

/** Removes a folder a move emptied (with what a crash left in it: temp files); one still holding something stays. */
async function removeDir (dir: string): Promise<void> {
  try {
    for (const name of await readdir(dir)) if (isTempFile(name)) await removeFileDurably(path.join(dir, name))
    await rmdir(dir)
    await fsyncDir(path.dirname(dir))
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code !== 'ENOENT' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err
  }
}

/** Relabels the schedules of the moved labels (each move in turn: a second run changes nothing). */
async function relabelSchedules (root: string, moves: readonly LayoutMove[]): Promise<void> {
  const file = path.join(root, SCHEDULES_FILE)
  const lines = await readScheduleLines(file)
  let changed = false
  for (const move of moves) {
    for (const line of lines) {
      if (move.dimension === 'environment' && line.environment === move.from) {
        line.environment = move.to
        changed = true
      } else if (move.dimension === 'locale' && (line.locale ?? '') === move.from) {
        line.locale = move.to === '' ? null : move.to
        changed = true
      }
    }
  }
  if (changed) await writeScheduleLines(file, lines)
}
