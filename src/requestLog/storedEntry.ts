import { randomUUID } from 'node:crypto';
import type { StoredRequestLogEntry } from '../store/records.js';
import type { RequestLogRecord } from './requestLogRecord.js';

const MAX_REASON_LENGTH = 300;

/**
 * A record as the request path made it, made a row where the writer runs (the request log's thread,
 * requestLogThread.ts): its id, its normalised sender, reason and userOpHash.
 */
export function storedEntry(r: RequestLogRecord): StoredRequestLogEntry {
  const [at, accountId, dappId, chainId, method, mode, sender, outcome, errorCode, reason] = r;
  const [, , , , , , , , , , webhookAllowed, webhookReason, webhookLatencyMs, webhookCalls, latencyMs, policy, hash] =
    r;
  return {
    id: randomUUID(),
    at,
    accountId,
    dappId,
    chainId,
    method,
    mode,
    sender: sender === null ? null : sender.toLowerCase(),
    outcome,
    errorCode,
    reason: reason === null ? null : reason.slice(0, MAX_REASON_LENGTH),
    webhook:
      webhookAllowed === null
        ? null
        : {
            allowed: webhookAllowed,
            reason: webhookReason,
            latencyMs: webhookLatencyMs ?? 0,
            calls: webhookCalls ?? 0,
          },
    latencyMs,
    policy,
    userOpHash: hash === null ? null : hash.toLowerCase(),
    actualCostWei: null,
  };
}
