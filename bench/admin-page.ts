// The admin UI's size and load time as both the bench (admin phase) and the end-to-end test
// measure them: Debian's Chromium with the flags this machine needs, the gzipped size of the
// built JavaScript, and a page's navigation time.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import type { Page } from 'playwright-core'

/** Debian's Chromium; `LECTERN_CHROMIUM` overrides the path. */
export const CHROMIUM = process.env.LECTERN_CHROMIUM ?? '/usr/bin/chromium'

/** Headless, and nothing that reaches for the network this machine does not have. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/** The gzipped size in bytes of every JavaScript file of a Vite build (`<dist>/assets/*.js`). */
export function gzippedJavaScriptBytes (dist: string): number {
  const assets = path.join(dist, 'assets')
  return readdirSync(assets).filter(f => f.endsWith('.js')).reduce((sum, f) => sum + gzipSync(readFileSync(path.join(assets, f))).length, 0)
}

/** From navigation start to the load event of the page's current document, in ms (null without a navigation entry). */
export async function navigationMs (page: Page): Promise<number | null> {
  return await page.evaluate<number | null>("(() => { const nav = performance.getEntriesByType('navigation')[0]; return nav === undefined ? null : nav.loadEventEnd - nav.startTime })()")
}

/**
 * Opens `url` (an admin list) and waits for its first row: the time from navigation start until
 * that row is visible, in ms, read in the page as soon as the wait ends.
 */
export async function firstRowMs (page: Page, url: string): Promise<number> {
  await page.goto(url, { waitUntil: 'commit' })
  await page.locator('table.entries tbody tr').first().waitFor({ state: 'visible' })
  return await page.evaluate<number>('performance.now()')
}
