// tap's coverage map (.taprc `coverage-map`): whatever a test file loads, coverage is counted for
// the program's own sources only. So test helpers and fixtures, bench/ (the admin test imports
// it), the admin's browser code and a vite build of it (a child process of the admin test), and
// a compiled dist/ never enter the figures. A module of types only is never loaded (`import type`
// is erased), so it counts for nothing either way.
export const PROGRAM = ['app.ts', 'server.ts', 'cli.ts', 'cli-data-dir.ts', 'lib/**/*.ts', 'plugins/**/*.ts', 'routes/**/*.ts', 'types/**/*.ts']

export default () => PROGRAM
