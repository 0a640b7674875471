// Module hooks (node:module `register`) for test/ts-loader.mjs.
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { transform } from 'esbuild'

const TS_FILE = /\.m?ts$/
const RELATIVE_JS = /^\.{1,2}\/.*\.js$/

/** Relative `.js` specifiers name the `.ts` source beside them (tsconfig `module: NodeNext`). */
export async function resolve (specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context)
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !RELATIVE_JS.test(specifier)) throw err
    return await nextResolve(`${specifier.slice(0, -3)}.ts`, context)
  }
}

/**
 * A .ts file as an ES module, with an inline source map holding its text: Node maps stack traces
 * and tap's coverage back to the source through it, and the coverage report reads the source from it.
 * Whitespace and names are kept, so generated lines follow the source's lines.
 */
export async function load (url, context, nextLoad) {
  if (!url.startsWith('file:') || !TS_FILE.test(new URL(url).pathname)) return await nextLoad(url, context)
  const file = fileURLToPath(url)
  const { code } = await transform(await readFile(file, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcefile: file,
    sourcemap: 'inline',
    sourcesContent: true,
    // as tsconfig.json: imports are kept as written (`import type` is the only one erased)
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } }
  })
  return { format: 'module', source: code, shortCircuit: true }
}
