import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The better-sqlite3 constructor for this Node. better-sqlite3 12 is the last that builds on Node 20, but on
 * Node 24 a process that exits naturally after closing a database may abort in its teardown
 * (`Statement::~Statement` → `node::RemoveEnvironmentCleanupHook`, "Assertion failed: (env) != nullptr"): a
 * short CLI-like process or a test file, depending on when the garbage collector last ran. better-sqlite3 13
 * fixes it and needs Node 22 or later; npm installs it as the optional dependency `better-sqlite3-node22`
 * only where its engines allow, so on Node 22+ it is used, and on Node 20 (or if it is missing) 12 is.
 * Both have the same API, so one type serves.
 */
const require = createRequire(import.meta.url);

function load(): typeof BetterSqlite3 {
  if (Number(process.versions.node.split('.')[0]) >= 22) {
    try {
      return require('better-sqlite3-node22') as typeof BetterSqlite3;
    } catch {
      // Not installed (an install made under Node 20, or with optional dependencies omitted): 12 still works.
    }
  }
  return require('better-sqlite3') as typeof BetterSqlite3;
}

export const Sqlite: typeof BetterSqlite3 = load();
/** Which driver `Sqlite` is, for the start-up log and the tests. */
export const sqliteDriverVersion: string = (
  require(
    Sqlite === require('better-sqlite3') ? 'better-sqlite3/package.json' : 'better-sqlite3-node22/package.json',
  ) as {
    version: string;
  }
).version;
