import type { RequestLogRepository } from '../store/events/requestLogRepository.js';
import type { RequestLogRecord } from './requestLogRecord.js';
import type { RequestLogWriter } from './requestLogWriter.js';

/**
 * The paymaster request log's writer. Recording sits on the sponsorship hot path, so `record` is an append to
 * an in-memory buffer and nothing else: a timer (and a full batch) hands it to the writer in batches, which makes
 * the rows (ids, normalised fields) and inserts them on a thread of its own where the database allows one
 * (requestLogThread.ts). The buffer is bounded; when the database falls behind, entries are dropped and counted
 * rather than slowing requests or growing memory. Retention (age and a row cap) is enforced periodically.
 */
export interface RequestLogSink {
  record(entry: RequestLogRecord): void;
}

export interface RequestLogStats {
  readonly recorded: number;
  readonly dropped: number;
  readonly written: number;
  /** Entries lost to failed writes (logged, not retried: a database outage must not grow the buffer). */
  readonly failed: number;
  readonly buffered: number;
}

export interface RequestLogRecorder extends RequestLogSink {
  /** Writes everything buffered so far. */
  flush(): Promise<void>;
  /** Deletes rows past the retention age and beyond the row cap. */
  prune(): Promise<number>;
  stats(): RequestLogStats;
  /** Stops the timers and writes what is left. */
  close(): Promise<void>;
}

export interface RequestLogRecorderOptions {
  /** Retention (prune) runs through it. */
  readonly repository: RequestLogRepository;
  /** Where batches are written (requestLogWriter.ts); closed with the recorder. */
  readonly writer: RequestLogWriter;
  readonly now: () => number;
  readonly logger: { warn(obj: object, msg: string): void };
  /** Told of each failed write (the storage's health names a storage fault among them). */
  readonly onWriteError?: (err: unknown) => void;
  /** 0: recording is off. */
  readonly retentionDays: number;
  readonly maxRows: number;
  readonly bufferLimit?: number;
  readonly batchSize?: number;
  readonly flushIntervalMs?: number;
  readonly pruneIntervalMs?: number;
}

export function createRequestLogRecorder(opts: RequestLogRecorderOptions): RequestLogRecorder {
  const enabled = opts.retentionDays > 0;
  const bufferLimit = opts.bufferLimit ?? 10_000;
  const batchSize = opts.batchSize ?? 500;
  let buffer: RequestLogRecord[] = [];
  let flushing: Promise<void> | undefined;
  let flushQueued = false;
  let closed = false;
  const counts = { recorded: 0, dropped: 0, written: 0, failed: 0 };
  let lastWarnAt = 0;

  const warn = (obj: object, msg: string) => {
    // At most one warning a minute: a database outage must not flood the log either.
    const t = opts.now();
    if (t - lastWarnAt < 60_000) return;
    lastWarnAt = t;
    opts.logger.warn({ ...obj, ...counts }, msg);
  };

  const writeAll = async () => {
    while (buffer.length > 0) {
      const batch = buffer.length <= batchSize ? buffer : buffer.slice(0, batchSize);
      buffer = buffer.length <= batchSize ? [] : buffer.slice(batchSize);
      try {
        await opts.writer.write(batch);
        counts.written += batch.length;
      } catch (err) {
        counts.failed += batch.length;
        opts.onWriteError?.(err);
        warn({ err }, 'could not write the request log; entries dropped');
      }
    }
  };

  const flush = (): Promise<void> => {
    if (flushing !== undefined) {
      // One writer at a time; whatever arrives meanwhile is taken by the next round.
      return flushing.then(() => (buffer.length > 0 ? flush() : undefined));
    }
    flushing = writeAll().finally(() => {
      flushing = undefined;
    });
    return flushing;
  };

  const prune = async (): Promise<number> => {
    if (!enabled) return 0;
    try {
      const aged = await opts.repository.deleteOlderThan(opts.now() - opts.retentionDays * 86_400_000);
      return aged + (await opts.repository.deleteBeyond(opts.maxRows));
    } catch (err) {
      warn({ err }, 'could not prune the request log');
      return 0;
    }
  };

  const flushTimer = enabled ? setInterval(() => void flush(), opts.flushIntervalMs ?? 1000) : undefined;
  const pruneTimer = enabled ? setInterval(() => void prune(), opts.pruneIntervalMs ?? 10 * 60_000) : undefined;
  flushTimer?.unref();
  pruneTimer?.unref();

  return {
    record(entry) {
      if (!enabled || closed) return;
      if (buffer.length >= bufferLimit) {
        counts.dropped += 1;
        warn({}, 'request log buffer full; entries dropped');
        return;
      }
      counts.recorded += 1;
      buffer.push(entry);
      if (buffer.length >= batchSize && !flushQueued) {
        flushQueued = true;
        setImmediate(() => {
          flushQueued = false;
          void flush();
        });
      }
    },
    flush,
    prune,
    stats: () => ({ ...counts, buffered: buffer.length }),
    async close() {
      closed = true;
      if (flushTimer !== undefined) clearInterval(flushTimer);
      if (pruneTimer !== undefined) clearInterval(pruneTimer);
      await flush();
      await opts.writer.close();
    },
  };
}
