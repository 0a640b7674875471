// The SQLite driver, picked by Node's major version.
//
// better-sqlite3 12 wraps its databases and statements in node::ObjectWrap. Compiled against
// Node 24.19 or newer, ObjectWrap registers an environment cleanup hook per object, and removing
// it aborts the process ("Assertion failed: (env) != nullptr") when the garbage collector frees a
// statement outside a JavaScript context, which V8's idle-time collections do
// (nodejs/node#65446). better-sqlite3 13 is built on Node-API and is immune, but it needs Node 22
// or newer, and CI still runs Node 20. So both are installed, 13 under the alias
// `better-sqlite3-napi`, and Node 22 and later load it. Their APIs are the same; the types are
// better-sqlite3's. Drop 12 (and this switch) once Node 20 is no longer supported.
import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'

const require = createRequire(import.meta.url)

/** The package this process loads: `better-sqlite3-napi` (13) on Node 22 and later, else `better-sqlite3` (12). */
export function driverPackage (nodeVersion: string = process.versions.node): string {
  return Number(nodeVersion.split('.', 1)[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3'
}

// A CommonJS package loaded with Node's documented createRequire: one synchronous load at import.
const Database = require(driverPackage()) as typeof BetterSqlite3

// The type names callers know from better-sqlite3 (`Database.Database`, `Database.Statement`).
declare namespace Database {
  export type Database = BetterSqlite3.Database
  export type Statement<BindParameters extends unknown[] | {} = unknown[], Result = unknown> = BetterSqlite3.Statement<BindParameters, Result>
}

export default Database
export type { Database as SqliteDatabase, Statement } from 'better-sqlite3'
