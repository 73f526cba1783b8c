import { Worker } from 'node:worker_threads';
import type { RequestLogRecord } from './requestLogRecord.js';
import type { RequestLogWriter } from './requestLogWriter.js';

/**
 * The request log's writer on a thread of its own, for a SQLite file: better-sqlite3 writes synchronously, and on
 * the serving loop a row cost ~20 µs of every sponsored request (with its id and userOpHash). The thread opens its
 * own connection to the file (WAL: it never blocks a reader; a writer of the serving loop waits for its short
 * transactions, busy_timeout), makes the rows and inserts them; the serving loop only copies each batch to it.
 *
 * Not for PostgreSQL, whose inserts already leave the loop as I/O, nor an in-memory database (no other connection
 * sees it). If the thread dies, what it was given and everything after is written on this thread (`fallback`):
 * nothing recorded is lost to it.
 */
export interface ThreadBatch {
  readonly id: number;
  readonly entries: readonly RequestLogRecord[];
}
export type ThreadReply = { readonly id: number; readonly error?: string; readonly code?: string };
export const CLOSE = 'close';

const THREAD_HEAP = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 96 };

export function startRequestLogThread(args: {
  readonly file: string;
  readonly fallback: RequestLogWriter;
  readonly logger: { error(obj: object, msg: string): void };
}): RequestLogWriter {
  // The entry beside this module: compiled (.js), or under tsx (the tests, `npm run dev`) its source, which the
  // worker runs with tsx's loader (a worker does not inherit one registered in-process).
  const source = import.meta.url.endsWith('.ts');
  const entry = new URL(`./requestLogThreadMain${source ? '.ts' : '.js'}`, import.meta.url);
  // Its heap bounded, and not sized by the serving loop's flags (npm start's --max-semi-space-size=64 would give this
  // isolate 64 MiB semi-spaces too): a batch is at most 500 rows, ~1 MB. Past the bound it dies; the fallback writes.
  const options = { workerData: { file: args.file }, resourceLimits: THREAD_HEAP, execArgv: [] };
  const worker = source
    ? new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`,
        { eval: true, ...options },
      )
    : new Worker(entry, options);
  // Kept referenced only while a batch is out, so an idle writer never holds the process up.
  worker.unref();
  const pending = new Map<number, { readonly batch: ThreadBatch; done(err?: Error): void }>();
  let nextId = 0;
  let dead = false;

  const settle = (id: number, err?: Error) => {
    const p = pending.get(id);
    if (p === undefined) return;
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    p.done(err);
  };
  worker.on('message', (reply: ThreadReply) => {
    settle(
      reply.id,
      reply.error === undefined ? undefined : Object.assign(new Error(reply.error), { code: reply.code }),
    );
  });
  const die = (err: Error) => {
    if (dead) return;
    dead = true;
    args.logger.error({ err }, 'the request log thread stopped; writing the request log on the serving loop');
    // What it was given and did not confirm is written here (a batch it wrote but did not confirm may appear twice).
    for (const [id, p] of [...pending]) {
      pending.delete(id);
      args.fallback.write(p.batch.entries).then(
        () => p.done(),
        (e: unknown) => p.done(e instanceof Error ? e : new Error(String(e))),
      );
    }
  };
  worker.on('error', die);
  worker.on('exit', (code) => die(new Error(`the request log thread exited (code ${code})`)));

  return {
    write(entries) {
      if (dead) return args.fallback.write(entries);
      const batch: ThreadBatch = { id: nextId++, entries };
      return new Promise<void>((resolve, reject) => {
        pending.set(batch.id, { batch, done: (err) => (err === undefined ? resolve() : reject(err)) });
        if (pending.size === 1) worker.ref();
        worker.postMessage(batch);
      });
    },
    async close() {
      if (dead) return;
      dead = true;
      worker.ref();
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage(CLOSE);
      await exited;
    },
  };
}
