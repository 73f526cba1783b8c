import { PatronError, StorageUnavailableError } from '../../errors/PatronError.js';

/**
 * What a database error says about the storage itself, as opposed to about one query (a unique violation, a bad
 * value): the disk is full, the files or the server are read-only, another process holds the lock past the wait,
 * the file is corrupt, an I/O error, or the server cannot be reached. These are the faults an operator must see named
 * (docs/guides/operations.md, "Storage faults"): the edge answers them as transient (503, JSON-RPC -32050) instead of
 * an internal error, and storageHealth.ts logs each once, with the database's location, and fails /readyz until it
 * clears.
 *
 * Read from both drivers' own error shapes: better-sqlite3's `SqliteError.code` (SQLITE_FULL, SQLITE_READONLY_*,
 * ...), PostgreSQL's SQLSTATE in `code` (53100 disk_full, 25006 read_only_sql_transaction, the 08 and 57P classes),
 * Node's socket errno codes, and node-postgres's own messages for a connection that ended or never came. The cause
 * chain is walked, so a fault wrapped by a repository or a transaction is still found.
 */
export type StorageFaultKind = 'disk_full' | 'read_only' | 'locked' | 'corrupt' | 'io' | 'cannot_open' | 'unreachable';

export interface StorageFault {
  readonly kind: StorageFaultKind;
  /** The driver's code (SQLITE_FULL, 53100, ECONNREFUSED) or `message` when only the message told. */
  readonly code: string;
  /** The driver's message, for the operator's log line (never sent to a caller). */
  readonly message: string;
}

/** What each kind means, in the words of the log line and the caller's message. */
export const STORAGE_FAULT_TEXT: Readonly<Record<StorageFaultKind, string>> = {
  disk_full: 'disk full',
  read_only: 'read-only',
  locked: 'locked by another connection',
  corrupt: 'corrupt',
  io: 'I/O error',
  cannot_open: 'cannot open the database file',
  unreachable: 'database unreachable',
};

const SQLITE: ReadonlyArray<readonly [RegExp, StorageFaultKind]> = [
  [/^SQLITE_FULL/, 'disk_full'],
  [/^SQLITE_READONLY/, 'read_only'],
  [/^SQLITE_(BUSY|LOCKED)/, 'locked'],
  [/^SQLITE_(CORRUPT|NOTADB)/, 'corrupt'],
  [/^SQLITE_IOERR/, 'io'],
  [/^SQLITE_CANTOPEN/, 'cannot_open'],
];

/** SQLSTATE classes and codes (PostgreSQL's Appendix A). */
const POSTGRES: ReadonlyArray<readonly [RegExp, StorageFaultKind]> = [
  [/^53100$/, 'disk_full'],
  // A standby after a failover, or default_transaction_read_only: writes are refused.
  [/^25006$/, 'read_only'],
  [/^55P03$/, 'locked'],
  [/^XX00[12]$/, 'corrupt'],
  [/^58030$/, 'io'],
  // Connection exceptions; admin/crash shutdown, cannot connect now (starting up, recovering); too many connections.
  [/^(08...|57P0[1-3]|53300)$/, 'unreachable'],
];

const SOCKET = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EPIPE',
]);
const FILE: Readonly<Record<string, StorageFaultKind>> = { ENOSPC: 'disk_full', EROFS: 'read_only', EIO: 'io' };

/** node-postgres's own errors carry no code: a connection that ended, or one the pool could not get in time. */
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /not queryable/,
  /^Client was closed and is not queryable/,
  /^terminating connection/,
];

function own(err: object): StorageFault | undefined {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String((err as { message?: unknown }).message ?? '');
  if (typeof code === 'string') {
    const table = code.startsWith('SQLITE_') ? SQLITE : POSTGRES;
    for (const [pattern, kind] of table) if (pattern.test(code)) return { kind, code, message };
    if (SOCKET.has(code)) return { kind: 'unreachable', code, message };
    const file = FILE[code];
    if (file !== undefined) return { kind: file, code, message };
  }
  if (PG_CONNECTION_MESSAGES.some((p) => p.test(message))) return { kind: 'unreachable', code: 'message', message };
  return undefined;
}

export function storageFaultOf(err: unknown): StorageFault | undefined {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    const found = own(current);
    if (found !== undefined) return found;
    if (current instanceof AggregateError) {
      for (const e of current.errors) {
        const inner = storageFaultOf(e);
        if (inner !== undefined) return inner;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** How long a caller is told to wait before retrying a request the storage refused. */
export const STORAGE_RETRY_AFTER_SECONDS = 5;

/**
 * The caller's error for a storage fault (the edges map it to 503 / -32050 with Retry-After), or undefined when
 * `err` is no storage fault. A PatronError is already the domain's answer and is left as it is.
 */
export function storageUnavailable(err: unknown): StorageUnavailableError | undefined {
  if (err instanceof StorageUnavailableError) return err;
  if (err instanceof PatronError) return undefined;
  const fault = storageFaultOf(err);
  if (fault === undefined) return undefined;
  return new StorageUnavailableError({
    kind: fault.kind,
    text: STORAGE_FAULT_TEXT[fault.kind],
    retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS,
    cause: err,
  });
}
