/**
 * Runs `tick` after `firstDelayMs`, then `intervalMs` after each success; after a failure it waits longer each
 * time (doubling, up to `maxBackoffMs`) so a chain RPC that is down is not hammered, and the first success
 * resets the pace. Never two ticks at once, and on unref'd timers, so a pending round never keeps the process
 * alive. A failure is reported to `onError` and never escapes as an unhandled rejection.
 */
export interface PollLoop<T> {
  /** One more tick after the current one, if any; rejects with that tick's error (also given to onError). */
  runNow(): Promise<T>;
  /** No tick starts after this; settles when the running one has. */
  stop(): Promise<void>;
}

export function startPollLoop<T>(args: {
  readonly intervalMs: number;
  readonly maxBackoffMs: number;
  readonly firstDelayMs: number;
  /**
   * True: runNow drops the tick the timer has due, and the tick it runs arms the next, so asking for a tick never
   * adds one (a refresh asked for now replaces the scheduled one: pricing/refreshLoop.ts). By default the due tick
   * still runs, after the asked one.
   */
  readonly runNowReplacesDue?: boolean;
  readonly tick: () => Promise<T>;
  readonly onError: (err: unknown, retryInMs: number) => void;
}): PollLoop<T> {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failures = 0;
  let tail: Promise<void> = Promise.resolve();

  function schedule(ms: number): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (stopped) return;
    timer = setTimeout(() => {
      run().catch(() => {});
    }, ms);
    timer.unref();
  }

  function run(): Promise<T> {
    if (args.runNowReplacesDue === true && timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    const result = tail.then(() => {
      if (stopped) throw new Error('the loop is stopped');
      return args.tick();
    });
    tail = result.then(
      () => {
        failures = 0;
        schedule(args.intervalMs);
      },
      (err: unknown) => {
        if (stopped) return;
        failures++;
        const wait = Math.min(args.intervalMs * 2 ** Math.min(failures, 20), args.maxBackoffMs);
        args.onError(err, wait);
        schedule(wait);
      },
    );
    return result;
  }

  schedule(args.firstDelayMs);
  return {
    runNow: run,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await tail;
    },
  };
}
