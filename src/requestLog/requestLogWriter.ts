import type { RequestLogRepository } from '../store/events/requestLogRepository.js';
import type { RequestLogRecord } from './requestLogRecord.js';
import { storedEntry } from './storedEntry.js';

/** Where the request log's batches are written: on this thread, or on a thread of their own (requestLogThread.ts). */
export interface RequestLogWriter {
  /** Writes one batch: ids and normalisation are done where the writer runs. */
  write(entries: readonly RequestLogRecord[]): Promise<void>;
  close(): Promise<void>;
}

/** The writer on the calling thread: rows made here, inserted through the repository. */
export function inThreadWriter(repository: RequestLogRepository): RequestLogWriter {
  return {
    write: (entries) => repository.insertMany(entries.map(storedEntry)),
    close: async () => {},
  };
}
