import { randomUUID } from 'node:crypto';
import type { RequestLogEntry, StoredRequestLogEntry } from '../store/records.js';

const MAX_REASON_LENGTH = 300;

/**
 * An entry as the request path recorded it, made a row where the writer runs (the request log's thread,
 * requestLogThread.ts): its id, its normalised sender, reason and userOpHash.
 */
export function storedEntry(e: RequestLogEntry): StoredRequestLogEntry {
  return {
    ...e,
    id: randomUUID(),
    userOpHash: e.userOpHash === null ? null : e.userOpHash.toLowerCase(),
    actualCostWei: null,
    sender: e.sender === null ? null : e.sender.toLowerCase(),
    reason: e.reason === null ? null : e.reason.slice(0, MAX_REASON_LENGTH),
  };
}
