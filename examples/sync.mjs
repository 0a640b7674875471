#!/usr/bin/env node
// A static-site build's content step (README "Sync"): keeps a folder of JSON files in step with a
// Lectern server through GET /api/sync. Plain `fetch`, no framework, no dependency.
//
//   LECTERN_URL=http://localhost:3000 node examples/sync.mjs ./content
//
// The first run pulls every entry (initial=true); every later run only what changed since, deletions
// included. Each entry is `<dir>/<collection>/<slug>.json`, exactly its GET /api/content body; the
// cursor is kept in `<dir>/.cursor` after each answer is applied, so an interrupted run goes on where
// it stopped. Options (environment): LECTERN_KEY (a key: drafts too), LECTERN_STATUS (`published` to
// leave drafts out even with a key), LECTERN_ENVIRONMENT, LECTERN_LOCALE, LECTERN_COLLECTIONS (a,b).
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'

const dir = process.argv[2]
if (dir === undefined) {
  console.error('usage: node examples/sync.mjs <folder>')
  process.exit(2)
}
const base = (process.env.LECTERN_URL ?? 'http://localhost:3000').replace(/\/+$/, '')
const headers = process.env.LECTERN_KEY ? { authorization: `Bearer ${process.env.LECTERN_KEY}` } : {}
const cursorFile = path.join(dir, '.cursor')

/** The first request of a run: go on from the saved cursor, or start from nothing. */
function startUrl (cursor) {
  if (cursor !== null) return `${base}/api/sync?cursor=${encodeURIComponent(cursor)}&_per_page=1000`
  const params = new URLSearchParams({ initial: 'true', _per_page: '1000' })
  for (const [name, value] of [['_status', process.env.LECTERN_STATUS], ['_environment', process.env.LECTERN_ENVIRONMENT],
    ['_locale', process.env.LECTERN_LOCALE], ['collections', process.env.LECTERN_COLLECTIONS]]) {
    if (value) params.set(name, value)
  }
  return `${base}/api/sync?${params}`
}

/** Writes a file whole or not at all (a temp file renamed into place). */
async function writeAtomic (file, text) {
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(`${file}.tmp`, text)
  await rename(`${file}.tmp`, file)
}

/** Empties the folder (an expired cursor: start again from nothing). */
async function clear () {
  for (const name of await readdir(dir)) await rm(path.join(dir, name), { recursive: true, force: true })
}

async function sync () {
  await mkdir(dir, { recursive: true })
  let cursor = await readFile(cursorFile, 'utf8').catch(() => null)
  let url = startUrl(cursor)
  let upserts = 0
  let deletes = 0
  for (;;) {
    const res = await fetch(url, { headers })
    if (res.status === 410 && cursor !== null) {
      // The server no longer remembers every deletion since our cursor: pull everything again.
      await clear()
      cursor = null
      url = startUrl(null)
      continue
    }
    if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`)
    const answer = await res.json()
    for (const item of answer.items) {
      const file = path.join(dir, item.collection, `${item.slug}.json`)
      if (item.op === 'upsert') {
        await writeAtomic(file, JSON.stringify(item.entry, null, 2) + '\n')
        upserts++
      } else {
        await rm(file, { force: true })
        deletes++
      }
    }
    cursor = answer.cursor
    await writeAtomic(cursorFile, cursor)
    if (!answer.more) break
    url = `${base}/api/sync?cursor=${encodeURIComponent(cursor)}&_per_page=1000`
  }
  console.log(`synced: ${upserts} written, ${deletes} removed`)
}

await sync()
