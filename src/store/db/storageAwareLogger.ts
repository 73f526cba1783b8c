import type { Logger } from 'pino';
import type { StorageHealth } from './storageHealth.js';

/**
 * The logger the background loops get (lifecycle outbox and deliveries, settlement, the solvency guard, the keeper,
 * the request log, the sweeps): a warning or an error whose `err` is a storage fault is handed to the storage's
 * health (storageHealth.ts: one line when the fault begins, /readyz, the metric) and logged at debug only. Without
 * it, PostgreSQL down for a minute wrote a warning every 250 ms from the outbox alone, and the line that names the
 * cause scrolled away under them. Every other line passes through as it was. (No loop makes a child logger; one
 * made from this one logs as the plain logger does.)
 */
export function storageAwareLogger(logger: Logger, health: Pick<StorageHealth, 'report'>): Logger {
  const quiet =
    (level: 'warn' | 'error') =>
    (obj: unknown, ...rest: unknown[]): void => {
      const err = typeof obj === 'object' && obj !== null && 'err' in obj ? obj.err : undefined;
      const fault = err === undefined ? undefined : health.report(err);
      // pino's overloads take (object, message, ...args): passed on as they came.
      const log = (fault === undefined ? logger[level] : logger.debug).bind(logger) as (...args: unknown[]) => void;
      log(fault === undefined ? obj : { ...(obj as object), storageFault: fault.kind }, ...rest);
    };
  const warn = quiet('warn');
  const error = quiet('error');
  return new Proxy(logger, {
    get(target, prop, receiver) {
      if (prop === 'warn') return warn;
      if (prop === 'error') return error;
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}
