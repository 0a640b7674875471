import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'node_modules/**', 'data/**', 'admin/dist/**', 'coverage/**', '.tap/**'] }),
  {
    rules: {
      // TypeBox's idiom: a schema constant and its Static type share one name.
      '@typescript-eslint/no-redeclare': 'off',
      // `void promise` marks a deliberately unawaited promise (tap subtests, fire-and-forget).
      'no-void': ['error', { allowAsStatement: true }]
    }
  }
]
