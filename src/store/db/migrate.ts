import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type BetterSqlite3 from 'better-sqlite3';
import { StartRefusedError } from '../../errors/StartRefusedError.js';

/**
 * Plain-SQL migrations shared by SQLite and PostgreSQL: every `NNNN_name.sql` file in ./migrations, applied in
 * name order, each once, inside one transaction per start-up. Runs on the raw driver because both drivers
 * execute a multi-statement script natively there. A `NNNN_name.postgres.sql` file is PostgreSQL's alone, and a
 * `NNNN_name.sqlite.sql` SQLite's alone, for what the other has no counterpart of (0012: PostgreSQL's change
 * notifications; 0014: SQLite's change counter, which its caches read instead).
 */
export interface MigrationTarget {
  readonly kind: 'sqlite' | 'postgres';
  exec(sql: string): Promise<void>;
  transaction(fn: () => Promise<void>): Promise<void>;
  appliedNames(): Promise<string[]>;
}

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
const CREATE_LEDGER =
  'CREATE TABLE IF NOT EXISTS patron_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)';
const recordSql = (name: string) =>
  `INSERT INTO patron_migrations (name, applied_at) VALUES ('${name}', ${Date.now()})`;

export function listMigrations(
  kind: 'sqlite' | 'postgres',
  dir: string = MIGRATIONS_DIR,
): { name: string; sql: string }[] {
  return fs
    .readdirSync(dir)
    .filter((f) => {
      const only = /^\d{4}_[a-z0-9_]+\.(postgres|sqlite)\.sql$/.exec(f);
      return only === null ? /^\d{4}_[a-z0-9_]+\.sql$/.test(f) : only[1] === kind;
    })
    .sort()
    .map((f) => ({ name: f.replace(/(\.postgres|\.sqlite)?\.sql$/, ''), sql: fs.readFileSync(`${dir}/${f}`, 'utf8') }));
}

/**
 * Refuses a database that records a migration this build does not know: an older build would run against tables it
 * does not understand (and write rows a newer one reads wrongly). Checked before anything is applied.
 */
export function refuseUnknownMigrations(args: { applied: Iterable<string>; known: readonly { name: string }[] }): void {
  const known = new Set(args.known.map((m) => m.name));
  const unknown = [...args.applied].filter((name) => !known.has(name)).sort();
  const databaseNewest = unknown[unknown.length - 1];
  if (databaseNewest === undefined) return;
  const buildNewest = args.known[args.known.length - 1]?.name ?? '(none)';
  throw new StartRefusedError(
    `the database schema is at ${databaseNewest}, newer than this build (${buildNewest}): ` +
      'run a Patron build at least as new, or restore a backup',
  );
}

let newest: string | undefined;

/**
 * The newest migration this build has: the schema version of every database it has started on. Read from the
 * migrations directory once (the files are the build's own): /healthz asks on every probe.
 */
export function newestMigration(): string {
  if (newest === undefined) {
    const all = [...listMigrations('sqlite'), ...listMigrations('postgres')].map((m) => m.name).sort();
    newest = all[all.length - 1] ?? '(none)';
  }
  return newest;
}

/** Told of each migration as it is applied (the service logs it), with how long it took. */
export type OnMigration = (applied: { readonly name: string; readonly ms: number }) => void;

export async function runMigrations(target: MigrationTarget, onMigration?: OnMigration): Promise<string[]> {
  const migrations = listMigrations(target.kind);
  const applied: string[] = [];
  await target.transaction(async () => {
    await target.exec(CREATE_LEDGER);
    const done = new Set(await target.appliedNames());
    refuseUnknownMigrations({ applied: done, known: migrations });
    for (const m of migrations) {
      if (done.has(m.name)) continue;
      const started = performance.now();
      await target.exec(m.sql);
      await target.exec(recordSql(m.name));
      applied.push(m.name);
      onMigration?.({ name: m.name, ms: performance.now() - started });
    }
  });
  return applied;
}

/**
 * The SQLite variant, fully synchronous: no `await` while the write lock is held, so several opens of one
 * file in one process cannot wait on each other (better-sqlite3's busy wait would block the event loop).
 * IMMEDIATE takes the write lock up front, so separate processes starting together apply them in turn.
 */
export function runMigrationsSync(sqlite: BetterSqlite3.Database, onMigration?: OnMigration): string[] {
  const migrations = listMigrations('sqlite');
  return sqlite
    .transaction(() => {
      sqlite.exec(CREATE_LEDGER);
      const done = new Set(sqlite.prepare('SELECT name FROM patron_migrations').pluck().all() as string[]);
      refuseUnknownMigrations({ applied: done, known: migrations });
      const applied: string[] = [];
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        const started = performance.now();
        sqlite.exec(m.sql);
        sqlite.exec(recordSql(m.name));
        applied.push(m.name);
        onMigration?.({ name: m.name, ms: performance.now() - started });
      }
      return applied;
    })
    .immediate();
}
