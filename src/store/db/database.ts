import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { StorageConfig } from '../../config/config.js';
import { type OnMigration, runMigrations, runMigrationsSync } from './migrate.js';
import type { Database } from './schema.js';
import { Sqlite } from './sqliteDriver.js';

export type DatabaseKind = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  readonly kind: DatabaseKind;
  readonly db: Kysely<Database>;
  /** SQLite only: the better-sqlite3 handle, for the few hot writes that want a cached prepared statement. */
  readonly sqlite?: BetterSqlite3.Database;
  /** PostgreSQL only: the pool, for a library that queries it itself (the rate limiter's shared counts). */
  readonly pgPool?: pg.Pool;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  readonly storage: StorageConfig | { readonly kind: 'sqlite-memory' };
  /** PostgreSQL only: the schema to work in (tests use one schema per test for isolation). */
  readonly pgSchema?: string;
  /** Told of each migration as it is applied (inside the start's one migration transaction). */
  readonly onMigration?: OnMigration;
}

const PG_INT8_OID = 20;

/** Opens the database, applies pending migrations and returns a Kysely instance over it. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const { storage } = options;
  if (storage.kind === 'postgres') {
    return openPostgres(storage.url, storage.poolSize, options.pgSchema, options.onMigration);
  }
  const file = storage.kind === 'sqlite' ? storage.file : ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const sqlite = new Sqlite(file);
  // WAL lets the CLI and the server share the file; busy_timeout makes a writer wait for another process's
  // transaction instead of failing at once.
  try {
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = NORMAL');
    runMigrationsSync(sqlite, options.onMigration);
  } catch (err) {
    sqlite.close();
    throw err;
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    kind: 'sqlite',
    db,
    sqlite,
    close: async () => {
      // Kysely only closes what it initialised (nothing, if no query ran through it): close the handle too.
      await db.destroy();
      if (sqlite.open) sqlite.close();
    },
  };
}

async function openPostgres(
  url: string,
  poolSize: number,
  schema: string | undefined,
  onMigration: OnMigration | undefined,
): Promise<DatabaseHandle> {
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === PG_INT8_OID
        ? (v: string) => Number(v)
        : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that kills the process.
  pool.on('error', () => {});
  try {
    const client = await pool.connect();
    try {
      await runMigrations(
        {
          kind: 'postgres',
          exec: async (sql) => {
            await client.query(sql);
          },
          transaction: async (fn) => {
            await client.query('BEGIN');
            try {
              // Serialises concurrent start-ups of several service processes on one database; the schema is
              // created under the lock too (CREATE SCHEMA IF NOT EXISTS is not safe to run concurrently).
              await client.query('SELECT pg_advisory_xact_lock(7243001)');
              if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '')}"`);
              await fn();
              await client.query('COMMIT');
            } catch (err) {
              await client.query('ROLLBACK');
              throw err;
            }
          },
          appliedNames: async () =>
            (await client.query<{ name: string }>('SELECT name FROM patron_migrations')).rows.map((r) => r.name),
        },
        onMigration,
      );
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end();
    throw err;
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    db,
    pgPool: pool,
    close: async () => {
      // Kysely only ends a pool it initialised (not ours, if no query ran through it): end it here too.
      await db.destroy();
      if (!pool.ended) await pool.end();
    },
  };
}
