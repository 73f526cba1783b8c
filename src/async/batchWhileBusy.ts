/**
 * Group commit for one process: an item that arrives while a batch is in flight waits, and every item waiting goes
 * in the next batch (at most `max`); the first item of a quiet moment goes at once, alone. `run` answers each item
 * of its batch by position, `undefined` for one it leaves to `alone`; a batch that throws leaves all of its items to
 * `alone`, so one bad item never fails the others. Used where each item would otherwise be a PostgreSQL round trip
 * on a hot row: the spend ledger's reservations (pgReserveBatch.ts) and the rate limits' counts
 * (rateLimit/pgBatchedCounts.ts).
 */
export function batchWhileBusy<I, R>(deps: {
  readonly max: number;
  readonly run: (items: readonly I[]) => Promise<readonly (R | undefined)[]>;
  readonly alone: (item: I) => Promise<R>;
}): (item: I) => Promise<R> {
  interface Waiting {
    readonly item: I;
    readonly resolve: (r: R) => void;
    readonly reject: (e: unknown) => void;
  }
  const queue: Waiting[] = [];
  let running = false;
  const goAlone = (w: Waiting) => {
    deps.alone(w.item).then(w.resolve, w.reject);
  };

  const drain = async () => {
    running = true;
    try {
      while (queue.length > 0) {
        const batch = queue.splice(0, deps.max);
        let results: readonly (R | undefined)[];
        try {
          results = await deps.run(batch.map((w) => w.item));
        } catch {
          for (const w of batch) goAlone(w);
          continue;
        }
        batch.forEach((w, i) => {
          const r = results[i];
          if (r === undefined) goAlone(w);
          else w.resolve(r);
        });
      }
    } finally {
      running = false;
    }
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!running) void drain();
    });
}
