import type { Closable } from './closers.js';

/** One background clean-up: what to log when it fails, and the work. */
export type Sweep = readonly [failure: string, run: () => Promise<unknown>];

/**
 * Runs every sweep each `everyMs` on one unref'd interval (it never keeps the process up), all at once and each on
 * its own: a failure is logged with the sweep's message and holds nothing else. Closing stops the interval; a sweep
 * already running finishes by itself. Unlike the poll loop (pollLoop.ts) nothing waits on a sweep: they delete
 * what has expired, and a slow one at worst overlaps its next run.
 */
export function startSweeps(args: {
  readonly everyMs: number;
  readonly sweeps: readonly Sweep[];
  readonly logger: { warn(obj: object, msg: string): void };
}): Closable {
  const timer = setInterval(() => {
    for (const [failure, run] of args.sweeps) {
      run().catch((err: unknown) => args.logger.warn({ err }, failure));
    }
  }, args.everyMs);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
