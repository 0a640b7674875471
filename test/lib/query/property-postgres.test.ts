// The cross-backend property (property-check.ts) over the PostgreSQL store: the same reference,
// in a file of its own (its round trips to the server take most of a file's time limit).
import t from 'tap'
import { storeFactories } from '../../fixtures/stores.js'
import { checkAgainstReference } from './property-check.js'

const postgres = storeFactories.filter(factory => factory.name === 'postgres')

t.test('the PostgreSQL store returns the same pages as the reference', { skip: postgres.length === 0 ? 'postgres is not among LECTERN_TEST_STORES' : false }, async t => {
  await checkAgainstReference(t, postgres)
})
