import { randomUUID } from 'node:crypto';
import type { Keccak } from '../paymaster/entryPoints/abiWords.js';
import { userOpHashOf } from '../paymaster/entryPoints/userOpHashInput.js';
import type { StoredRequestLogEntry } from '../store/records.js';
import type { PendingRequestLogEntry } from './requestLogRecorder.js';

const MAX_REASON_LENGTH = 300;

/**
 * An entry as the request path recorded it, made a row: its id, its normalised sender and reason, and a signed
 * op's userOpHash computed from its input where the writer runs (the request log's thread, requestLogThread.ts).
 */
export function storedEntry(e: PendingRequestLogEntry, keccak: Keccak): StoredRequestLogEntry {
  const hash = e.userOpHash;
  return {
    ...e,
    id: randomUUID(),
    userOpHash: hash === null ? null : (typeof hash === 'string' ? hash : userOpHashOf(hash, keccak)).toLowerCase(),
    actualCostWei: null,
    sender: e.sender === null ? null : e.sender.toLowerCase(),
    reason: e.reason === null ? null : e.reason.slice(0, MAX_REASON_LENGTH),
  };
}
