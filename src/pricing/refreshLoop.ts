import { startPollLoop } from '../async/pollLoop.js';

/**
 * Runs `tick` now and then `intervalMs` after each tick settles (never two at once), on an unref'd timer so
 * a pending refresh never keeps the process alive. The poll loop (async/pollLoop.ts) as the price refresh wants it:
 * the first tick at once, a tick asked for now replacing the scheduled one, no backoff after a failure (the next
 * refresh comes at the same pace), every failure reported (one that ends while stopping too), and nothing that
 * rejects.
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
  const loop = startPollLoop({
    intervalMs: args.intervalMs,
    maxBackoffMs: args.intervalMs,
    // Never waited for: the first tick is asked for at once (below), and replaces the one due.
    firstDelayMs: args.intervalMs,
    runNowReplacesDue: true,
    // The tick reports its own failure, so the loop sees none: no backoff, and one ending while stopping is told.
    tick: async () => {
      try {
        await args.tick();
      } catch (err) {
        args.onError(err);
      }
    },
    onError: () => {},
  });
  // It rejects only once stopped, when no tick runs: settled all the same.
  const runNow = () => loop.runNow().catch(() => {});
  return {
    first: runNow(),
    runNow,
    stop() {
      // Stops the timer at once; the running tick, if any, finishes by itself (nothing waits for it).
      void loop.stop();
    },
  };
}
