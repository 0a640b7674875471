// The cross-backend property (property-check.ts) over the stores of this process: SQLite and files.
import t from 'tap'
import { storeFactories } from '../../fixtures/stores.js'
import { checkAgainstReference } from './property-check.js'

t.test('every store returns the same pages as the reference', async t => {
  await checkAgainstReference(t, storeFactories.filter(factory => factory.name !== 'postgres'))
})
