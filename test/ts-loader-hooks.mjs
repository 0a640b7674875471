// Module hooks (node:module `register`) for test/ts-loader.mjs.
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { transform } from 'esbuild'

const TS_FILE = /\.m?ts$/
/** A path or file URL (not a package) to a .js file, and its query (tap's mocks add one). */
const LOCAL_JS = /^((?:\.{1,2}\/|\/|file:).*)\.js([?#].*)?$/

/** A `.js` specifier of a file that is not there names the `.ts` source beside it (tsconfig `module: NodeNext`). */
export async function resolve (specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context)
  } catch (err) {
    const local = LOCAL_JS.exec(specifier)
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || local === null) throw err
    return await nextResolve(`${local[1]}.ts${local[2] ?? ''}`, context)
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
