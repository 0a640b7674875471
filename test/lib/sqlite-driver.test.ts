import t from 'tap'
import Database, { driverPackage } from '../../lib/sqlite-driver.js'

t.test('Node 22 and later load better-sqlite3 13 (Node-API), Node 20 loads 12', async t => {
  t.equal(driverPackage('20.19.0'), 'better-sqlite3')
  t.equal(driverPackage('21.7.3'), 'better-sqlite3')
  t.equal(driverPackage('22.0.0'), 'better-sqlite3-napi')
  t.equal(driverPackage('24.21.0'), 'better-sqlite3-napi')
  t.equal(driverPackage(), Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3')
})

t.test('the loaded driver opens a database and runs statements', async t => {
  const db: Database.Database = new Database(':memory:')
  t.teardown(() => db.close())
  db.exec('CREATE TABLE t (v TEXT)')
  const insert: Database.Statement<[string]> = db.prepare('INSERT INTO t (v) VALUES (?)')
  db.transaction(() => { for (const v of ['a', 'b']) insert.run(v) })()
  t.same(db.prepare('SELECT v FROM t ORDER BY v').pluck().all(), ['a', 'b'])
  t.equal(db.prepare("SELECT json_extract('{\"a\":[1,2]}', '$.a[1]')").pluck().get(), 2, 'JSON1 is built in')
})
