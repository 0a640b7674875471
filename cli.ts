#!/usr/bin/env node
// The `lectern` command (contract §16): a thin entry over lib/cli/main.ts, which holds the logic.
// Like server.ts, it alone reads the environment.
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { main } from './lib/cli/main.js'
import { openDataDir } from './cli-data-dir.js'

function version (): string {
  // package.json is beside this file in the sources, one folder up from dist/.
  for (const dir of [import.meta.dirname, path.dirname(import.meta.dirname)]) {
    const file = path.join(dir, 'package.json')
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version
  }
  return 'unknown'
}

const store = process.env.CMS_STORE === 'file' || process.env.CMS_STORE === 'postgres' ? process.env.CMS_STORE : 'sqlite'
process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, version: version(), defaultStore: store, openDataDir: async (dir, kind, options) => await openDataDir(dir, kind, process.env, options) }, process.env)
