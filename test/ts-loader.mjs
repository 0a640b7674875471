// Runs the TypeScript sources in test files and in the processes they spawn (.taprc `node-arg`,
// TS_CHILD_ARGS in helper.ts): each .ts file is transpiled alone by esbuild, types are checked by
// `npm run typecheck`. Not tsx: it strips whitespace, so a source line's code shares one generated
// line with its neighbours and the coverage report counts a line that never ran as run.
import { register } from 'node:module'

register('./ts-loader-hooks.mjs', import.meta.url)
