/**
 * Runs `tick` now and then `intervalMs` after each tick settles (never two at once), on an unref'd timer so
 * a pending refresh never keeps the process alive.
 */
export interface RefreshLoop {
  /** Settles when the first tick has (whether it succeeded or not). */
  readonly first: Promise<void>;
  /** Runs one more tick after the current one, if any; settles when it has. */
  runNow(): Promise<void>;
  stop(): void;
}

export function startRefreshLoop(args: {
  intervalMs: number;
  tick: () => Promise<void>;
  onError: (err: unknown) => void;
}): RefreshLoop {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let tail: Promise<void> = Promise.resolve();

  function run(): Promise<void> {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    tail = tail
      .then(() => (stopped ? undefined : args.tick()))
      .catch(args.onError)
      .finally(() => {
        // The tick that settles last arms the next one.
        if (timer !== undefined) clearTimeout(timer);
        if (stopped) return;
        timer = setTimeout(run, args.intervalMs);
        timer.unref();
      });
    return tail;
  }

  const first = run();
  return {
    first,
    runNow: run,
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}
