import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { type DatabaseConnection, Kysely, PostgresDialect, SqliteDialect, SqliteDriver } from 'kysely';
import pg from 'pg';
import type { StorageConfig } from '../../config/config.js';
import { type OnMigration, runMigrations, runMigrationsSync } from './migrate.js';
import type { Database } from './schema.js';
import { Sqlite } from './sqliteDriver.js';
import { STORAGE_FAULT_TEXT, storageFaultOf } from './storageFault.js';

export type DatabaseKind = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  readonly kind: DatabaseKind;
  readonly db: Kysely<Database>;
  /** SQLite only: the better-sqlite3 handle, for the few hot writes that want a cached prepared statement. */
  readonly sqlite?: BetterSqlite3.Database;
  /** PostgreSQL only: the pool, for a library that queries it itself (the rate limiter's shared counts). */
  readonly pgPool?: pg.Pool;
  /** Where the data is, for the operator's log lines: the SQLite file's path, or PostgreSQL's host:port/database. */
  readonly location: string;
  /**
   * Resolves when the storage takes writes now (storageHealth.ts clears a fault with it); rejects with an error
   * storageFault.ts names when it does not. Cheap enough for every /readyz probe; it writes nothing.
   */
  probe(): Promise<void>;
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
  let sqlite: BetterSqlite3.Database;
  try {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    sqlite = new Sqlite(file);
  } catch (err) {
    throw namedOpenFailure(file, err);
  }
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
    throw storageFaultOf(err) === undefined ? err : namedOpenFailure(file, err);
  }
  const db = new Kysely<Database>({ dialect: new RollbackSafeSqliteDialect({ database: sqlite }) });
  return {
    kind: 'sqlite',
    db,
    sqlite,
    location: file === ':memory:' ? ':memory:' : path.resolve(file),
    probe: async () => probeSqlite(sqlite, file),
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
    // A server that does not answer (a failover in progress, a partition) fails a request within this, as a
    // storage fault (503), instead of holding it until the client gives up.
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    keepAlive: true,
    types,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that kills the process.
  pool.on('error', () => {});
  // A checked-out client (inside a transaction, between its queries) has no pool listener: a server that ends the
  // session then (a restart, a failover: 57P01) emitted an unheard 'error' and ended the process under load. Heard
  // here, the client's next query fails instead, as a storage fault the caller gets as 503.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
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
    location: postgresLocation(url),
    probe: async () => {
      // A standby (after a failover that pointed the URL at the wrong node) answers reads and refuses writes.
      const { rows } = await pool.query<{ ro: string }>("SELECT current_setting('transaction_read_only') AS ro");
      if (rows[0]?.ro === 'on') {
        throw Object.assign(new Error('the server is read-only (a standby, or default_transaction_read_only)'), {
          code: '25006',
        });
      }
    },
    close: async () => {
      // Kysely only ends a pool it initialised (not ours, if no query ran through it): end it here too.
      await db.destroy();
      if (!pool.ended) await pool.end();
    },
  };
}

const PG_CONNECT_TIMEOUT_MS = 10_000;
/** Under this much free space on the SQLite file's file system, the probe says the disk is full. */
const MIN_FREE_BYTES = 1024 * 1024;
/** The probe's wait for the write lock: another process holding it longer is a locked database now. */
const PROBE_BUSY_MS = 200;

/**
 * SQLite takes writes now: free space left on its file system, the file writable (a read-only remount is seen here,
 * before a write fails), and the write lock obtainable (`BEGIN IMMEDIATE`, given back at once: nothing written).
 */
function probeSqlite(sqlite: BetterSqlite3.Database, file: string): void {
  if (file !== ':memory:') {
    const fsStats = fs.statfsSync(path.dirname(file));
    const free = fsStats.bavail * fsStats.bsize;
    if (free < MIN_FREE_BYTES) {
      throw Object.assign(new Error(`${free} bytes free on the database's file system`), { code: 'ENOSPC' });
    }
    fs.accessSync(file, fs.constants.W_OK);
  }
  // Inside another transaction (one awaiting on this connection) the lock is held by this process: it answers.
  if (sqlite.inTransaction) return;
  const wait = sqlite.pragma('busy_timeout', { simple: true });
  sqlite.pragma(`busy_timeout = ${PROBE_BUSY_MS}`);
  try {
    sqlite.exec('BEGIN IMMEDIATE');
    sqlite.exec('ROLLBACK');
  } finally {
    sqlite.pragma(`busy_timeout = ${Number(wait)}`);
  }
}

/** The URL without its credentials or options: where the server is, for a log line. */
function postgresLocation(url: string): string {
  if (!URL.canParse(url)) return 'postgres';
  const u = new URL(url);
  return `postgres://${u.host}${u.pathname}`;
}

/**
 * Kysely's SQLite driver, but a rollback of a transaction SQLite already rolled back itself is a no-op. Why: on
 * SQLITE_FULL, SQLITE_IOERR or SQLITE_BUSY SQLite may end the transaction on its own; Kysely's unconditional
 * `ROLLBACK` then threw `cannot rollback - no transaction is active`, and that replaced the cause (a full disk) in
 * every answer and log line.
 */
class RollbackSafeSqliteDialect extends SqliteDialect {
  readonly #database: BetterSqlite3.Database;
  constructor(config: { database: BetterSqlite3.Database }) {
    super(config);
    this.#database = config.database;
  }
  override createDriver() {
    const database = this.#database;
    return new (class extends SqliteDriver {
      override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
        if (database.inTransaction) await super.rollbackTransaction(connection);
      }
    })({ database });
  }
}

/**
 * A start that cannot open or write the SQLite file says where and why in one line: SQLite's own message is
 * `unable to open database file` with no path, for a read-only mount, a missing permission and a full disk alike.
 * The driver's code is kept, so storageFault.ts still names the fault.
 */
function namedOpenFailure(file: string, err: unknown): Error {
  const dir = path.dirname(file);
  let why = err instanceof Error ? err.message : String(err);
  const fault = storageFaultOf(err);
  if (fault !== undefined && fault.kind !== 'cannot_open') why = `${STORAGE_FAULT_TEXT[fault.kind]}: ${why}`;
  else {
    try {
      fs.accessSync(dir, fs.constants.W_OK);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code === 'EROFS') why = `its directory ${dir} is on a read-only file system (${why})`;
      else if (code === 'EACCES' || code === 'EPERM') why = `this user may not write to ${dir} (${why})`;
      else if (code === 'ENOENT') why = `${dir} does not exist and cannot be created (${why})`;
    }
  }
  const code = (err as { code?: unknown }).code;
  return Object.assign(new Error(`the database ${file} cannot be opened: ${why}`, { cause: err }), {
    ...(typeof code === 'string' ? { code } : {}),
  });
}
