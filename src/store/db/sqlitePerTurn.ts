import type BetterSqlite3 from 'better-sqlite3';

/**
 * SQLite's group commit for the hot writes (the spend ledger's reservations, sqliteReserve.ts; the sponsorship
 * tokens' jti spends, sqliteTokenSpend.ts): the items asked for within one turn of the event loop are done by `each`
 * in one `BEGIN IMMEDIATE` transaction of the service's connection, answered by position once it committed.
 *
 * Why: each commit writes the pages it touched to the WAL (~100 µs on this VM's disk), which one transaction per
 * request paid in full; under load a turn of the loop holds many requests (~28 in bench scenario a). `IMMEDIATE`
 * takes the database's write lock before anything is read, so each batch is one step against every other connection
 * and process.
 *
 * Every item is answered undefined, for the caller's own (asynchronous) path, when the batch did not run: the
 * connection was inside a transaction someone else opened (a Kysely one waiting on an await: better-sqlite3 would
 * nest ours as a savepoint of theirs), or `each` threw for one item (the whole batch rolled back, so one item the
 * database refuses fails alone on that path, not with the others of its turn).
 */
export function sqlitePerTurn<I, R>(
  sqlite: BetterSqlite3.Database,
  each: (item: I) => R,
): (item: I) => Promise<R | undefined> {
  interface Pending {
    readonly item: I;
    resolve(result: R | undefined): void;
  }
  const runBatch = sqlite.transaction((batch: readonly Pending[]): R[] => batch.map((p) => each(p.item)));
  let queue: Pending[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    let results: R[] | undefined;
    if (!sqlite.inTransaction) {
      try {
        results = runBatch.immediate(batch);
      } catch {
        results = undefined;
      }
    }
    batch.forEach((p, i) => {
      p.resolve(results?.[i]);
    });
  };
  return (item) =>
    new Promise((resolve) => {
      queue.push({ item, resolve });
      if (queue.length === 1) setImmediate(flush);
    });
}
