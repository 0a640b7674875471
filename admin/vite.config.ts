// The admin UI build: a Preact single-page app served by plugins/admin.ts under /admin/.
// `npm run build:admin` writes admin/dist (git-ignored); the server reads it at request time.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { defineConfig, type Plugin } from 'vite'
import preact from '@preact/preset-vite'

const root = fileURLToPath(new URL('.', import.meta.url))

/** Built files worth compressing (text), and the size from which the server compresses (contract §11). */
const COMPRESSIBLE = /\.(?:html|js|mjs|css|json|map|txt|xml)$/
const MIN_COMPRESSED_BYTES = 1024

/**
 * Writes `<file>.br` and `<file>.gz` beside every built text file of 1 KB or more, at the
 * highest quality: built once, served many times (plugins/admin.ts, @fastify/static's
 * `preCompressed`), so the server never compresses them itself.
 */
function preCompress (): Plugin {
  return {
    name: 'lectern-pre-compress',
    apply: 'build',
    writeBundle (options) {
      const dir = options.dir ?? path.join(root, 'dist')
      for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
        const file = path.join(dir, name)
        if (!COMPRESSIBLE.test(file) || !statSync(file).isFile()) continue
        const body = readFileSync(file)
        if (body.length < MIN_COMPRESSED_BYTES) continue
        writeFileSync(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }))
        writeFileSync(`${file}.gz`, gzipSync(body, { level: constants.Z_BEST_COMPRESSION }))
      }
    }
  }
}

export default defineConfig({
  root,
  base: '/admin/',
  plugins: [preact({ devToolsEnabled: false, prefreshEnabled: false, reactAliasesEnabled: false }), preCompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // One small bundle: the whole UI is a few dozen kilobytes, splitting would only add requests.
    assetsInlineLimit: 0,
    reportCompressedSize: true
  },
  server: {
    // `npx vite --config admin/vite.config.ts` for UI work against a running server on :3000.
    proxy: { '/api': 'http://127.0.0.1:3000' }
  }
})
