/** Something that holds a resource until it is closed: a store, a loop, a thread, a connection pool. */
export interface Closable {
  close(): Promise<void> | void;
}

/**
 * What a start opened, in the order it opened it, so that one list serves both ends: a normal close, and the
 * clean-up of a start that throws half-way (deps.ts). Closing runs the list last-opened first, so nothing is
 * closed while something opened after it (and maybe using it) still runs.
 */
export interface Closers {
  /** Closes `close` with the rest, before everything added earlier. */
  defer(close: () => Promise<void> | void): void;
  /** `defer(thing.close)`, returning `thing`: for a value that is opened and kept in one expression. */
  own<T extends Closable>(thing: T): T;
  /**
   * Runs every close, the last added first, each after the one before has settled; one that throws does not keep
   * the others from running (a failed flush must not leave the database open). Rejects with the first failure
   * (an AggregateError when several failed). Closing twice closes once.
   */
  closeAll(): Promise<void>;
}

export function createClosers(): Closers {
  const closes: (() => Promise<void> | void)[] = [];
  let closing: Promise<void> | undefined;
  const closers: Closers = {
    defer(close) {
      closes.push(close);
    },
    own(thing) {
      closes.push(() => thing.close());
      return thing;
    },
    closeAll() {
      closing ??= (async () => {
        const failures: unknown[] = [];
        for (const close of [...closes].reverse()) {
          try {
            await close();
          } catch (err) {
            failures.push(err);
          }
        }
        if (failures.length === 1) throw failures[0];
        if (failures.length > 1) throw new AggregateError(failures, `${failures.length} closes failed`);
      })();
      return closing;
    },
  };
  return closers;
}

/**
 * Runs `start` with a fresh list of closers. When it throws, what it opened so far is closed (last opened first)
 * before its error is passed on: a start that fails on the way leaves no loop, thread or connection behind.
 * A failure to close is then secondary to the start's own error: it is logged.
 */
export async function withClosers<T>(
  logger: { error(obj: object, msg: string): void },
  start: (closers: Closers) => Promise<T>,
): Promise<T> {
  const closers = createClosers();
  try {
    return await start(closers);
  } catch (err) {
    await closers
      .closeAll()
      .catch((closeErr: unknown) =>
        logger.error({ err: closeErr }, 'a start that failed could not close what it had opened'),
      );
    throw err;
  }
}
