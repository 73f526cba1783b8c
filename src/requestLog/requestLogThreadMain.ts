import { parentPort, workerData } from 'node:worker_threads';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../store/db/schema.js';
import { Sqlite } from '../store/db/sqliteDriver.js';
import { createRequestLogRepository } from '../store/events/requestLogRepository.js';
import { CLOSE, type ThreadBatch, type ThreadReply } from './requestLogThread.js';
import { storedEntry } from './storedEntry.js';

/**
 * The request log thread's side (requestLogThread.ts): its own connection to the SQLite file the service opened
 * and migrated, the rows made and inserted here. Messages come only from the thread that started it.
 */
const port = parentPort;
if (port === null) throw new Error('requestLogThreadMain runs as a worker thread');
const { file } = workerData as { file: string };
const sqlite = new Sqlite(file);
sqlite.pragma('busy_timeout = 5000');
sqlite.pragma('synchronous = NORMAL');
const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
const repository = createRequestLogRepository(db, sqlite);

/** Batches being written: a close waits for them. */
const writing = new Set<Promise<void>>();

port.on('message', (message: ThreadBatch | typeof CLOSE) => {
  if (message === CLOSE) {
    void Promise.allSettled([...writing])
      .then(() => db.destroy())
      .finally(() => {
        if (sqlite.open) sqlite.close();
        port.close();
      });
    return;
  }
  const reply = (r: ThreadReply) => port.postMessage(r);
  const write = repository
    .insertMany(message.entries.map(storedEntry))
    .then(
      () => reply({ id: message.id }),
      (err: unknown) => {
        // The driver's code (SQLITE_FULL, ...) crosses with the message: the storage's health names the fault by it.
        const code = (err as { code?: unknown }).code;
        reply({
          id: message.id,
          error: err instanceof Error ? err.message : String(err),
          ...(typeof code === 'string' ? { code } : {}),
        });
      },
    )
    .finally(() => writing.delete(write));
  writing.add(write);
});
