import type { Config } from '../config/config.js';
import type { StorageHealth } from '../store/db/storageHealth.js';
import type { Store } from '../store/store.js';
import {
  createRequestLogRecorder,
  type RequestLogRecorder,
  type RequestLogRecorderOptions,
} from './requestLogRecorder.js';
import { startRequestLogThread } from './requestLogThread.js';
import { inThreadWriter } from './requestLogWriter.js';

/**
 * The paymaster request log (deps.ts): a SQLite file's rows are made and written on a thread of their own
 * (requestLogThread.ts), off the serving loop; PostgreSQL's, an in-memory database's, or a log that keeps nothing
 * (retention 0) on the serving thread, batched.
 */
export function buildRequestLog(args: {
  readonly config: Pick<Config, 'requestLog'>;
  readonly store: Pick<Store, 'requestLog' | 'sqliteFile'>;
  readonly logger: RequestLogRecorderOptions['logger'] & { error(obj: object, msg: string): void };
  readonly now: () => number;
  readonly storageHealth: Pick<StorageHealth, 'report'>;
}): RequestLogRecorder {
  const { config, store, logger } = args;
  const inThread = inThreadWriter(store.requestLog);
  return createRequestLogRecorder({
    repository: store.requestLog,
    writer:
      store.sqliteFile === undefined || config.requestLog.retentionDays === 0
        ? inThread
        : startRequestLogThread({ file: store.sqliteFile, fallback: inThread, logger }),
    now: args.now,
    logger,
    onWriteError: (err) => args.storageHealth.report(err),
    retentionDays: config.requestLog.retentionDays,
    maxRows: config.requestLog.maxRows,
  });
}
