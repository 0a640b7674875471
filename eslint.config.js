import neostandard, { plugins } from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'node_modules/**', 'data/**', 'admin/dist/**', 'coverage/**', '.tap/**'] }),
  {
    plugins: { '@typescript-eslint': plugins['typescript-eslint'].plugin },
    rules: {
      // TypeBox's idiom: a schema constant and its Static type share one name.
      '@typescript-eslint/no-redeclare': 'off',
      // `void promise` marks a deliberately unawaited promise (tap subtests, fire-and-forget).
      'no-void': ['error', { allowAsStatement: true }],
      // The SQLite driver is picked by Node's version in one place (lib/sqlite-driver.ts); a
      // direct import would load better-sqlite3 12 on Node 24, where it aborts. Types are fine.
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [
          { name: 'better-sqlite3', message: 'Import the driver from lib/sqlite-driver.ts.', allowTypeImports: true },
          { name: 'better-sqlite3-napi', message: 'Import the driver from lib/sqlite-driver.ts.', allowTypeImports: true }
        ]
      }],
      'no-restricted-syntax': ['error', {
        selector: 'ImportExpression[source.value=/^better-sqlite3/]',
        message: 'Import the driver from lib/sqlite-driver.ts.'
      }]
    }
  }
]
