// Runs `lectern` in this process (main() with the entry file's data-dir opener), for the CLI tests.
import { main, type CliContext } from '../../lib/cli/main.js'
import { openDataDir } from '../../cli-data-dir.js'
import type { StoreName } from '../helper.js'

export interface Run { code: number, out: string, err: string }

export async function lectern (args: string[], store: StoreName = 'sqlite', env: Record<string, string> = {}): Promise<Run> {
  let out = ''
  let err = ''
  const ctx: CliContext = {
    stdout: { write: (s: string) => { out += s } },
    stderr: { write: (s: string) => { err += s } },
    version: '0.0.0-test',
    defaultStore: store,
    openDataDir: async (dir, kind, options) => await openDataDir(dir, kind, env, options)
  }
  const code = await main(args, ctx, env)
  return { code, out, err }
}
