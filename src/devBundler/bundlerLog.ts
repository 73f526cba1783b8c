/** Where the bundler's lines go: Patron's logger, at the level alto gave (pino's names). */
export interface BundlerLogSink {
  warn(msg: string): void;
  error(msg: string): void;
  info(msg: string): void;
}

export interface BundlerLog {
  /** One line alto printed (pino JSON with `--json`; anything else is passed on as a warning). */
  line(text: string): void;
}

/** A bundler that logs in a loop (a failing executor retries every block) must not drown Patron's own lines. */
export const MAX_LINES_PER_SECOND = 10;
/** alto's errors carry viem's whole request (calldata of a bundle, kilobytes); the cause is in the first part. */
export const MAX_LINE_LENGTH = 400;

const PINO_LEVELS: Readonly<Record<number, 'info' | 'warn' | 'error'>> = {
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'error',
};

/**
 * alto's log lines, prefixed `[bundler]` and bounded: at most MAX_LINES_PER_SECOND a second (the rest counted and
 * the count said once the next second starts) and MAX_LINE_LENGTH characters each.
 */
export function createBundlerLog(args: { readonly sink: BundlerLogSink; readonly now: () => number }): BundlerLog {
  let windowStart = Number.NEGATIVE_INFINITY;
  let shown = 0;
  let dropped = 0;
  return {
    line(text) {
      if (text.trim() === '') return;
      const now = args.now();
      if (now - windowStart >= 1000) {
        if (dropped > 0)
          args.sink.warn(`[bundler] … ${dropped} more lines not shown (at most ${MAX_LINES_PER_SECOND} a second)`);
        windowStart = now;
        shown = 0;
        dropped = 0;
      }
      if (shown >= MAX_LINES_PER_SECOND) {
        dropped++;
        return;
      }
      shown++;
      const { level, msg } = parseLine(text);
      const cut = msg.length > MAX_LINE_LENGTH ? `${msg.slice(0, MAX_LINE_LENGTH)}… (${msg.length} chars)` : msg;
      args.sink[level](`[bundler] ${cut}`);
    },
  };
}

/** A pino JSON line's level and message (with its error's message when it has one); other text as a warning. */
function parseLine(text: string): { level: 'info' | 'warn' | 'error'; msg: string } {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'msg' in parsed) {
      const { level, msg, err } = parsed as { level?: unknown; msg?: unknown; err?: { message?: unknown } };
      const errMessage = typeof err?.message === 'string' ? `: ${err.message}` : '';
      return { level: (typeof level === 'number' && PINO_LEVELS[level]) || 'warn', msg: `${String(msg)}${errMessage}` };
    }
  } catch {
    // not JSON: alto's stack traces and Node's own warnings
  }
  return { level: 'warn', msg: text };
}
