// The admin UI build: a Preact single-page app served by plugins/admin.ts under /admin/.
// `npm run build:admin` writes admin/dist (git-ignored); the server reads it at request time.
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import preact from '@preact/preset-vite'

const root = fileURLToPath(new URL('.', import.meta.url))

export default defineConfig({
  root,
  base: '/admin/',
  plugins: [preact({ devToolsEnabled: false, prefreshEnabled: false, reactAliasesEnabled: false })],
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
