import type { RequestLogRecord } from '../../src/requestLog/requestLogRecord.js';
import type { RequestLogEntry } from '../../src/store/records.js';

/** A request log entry written by name, as the request path records it (requestLogRecord.ts's positions). */
export function recordOf(e: RequestLogEntry): RequestLogRecord {
  return [
    e.at,
    e.accountId,
    e.dappId,
    e.chainId,
    e.method,
    e.mode,
    e.sender,
    e.outcome,
    e.errorCode,
    e.reason,
    e.webhook?.allowed ?? null,
    e.webhook?.reason ?? null,
    e.webhook?.latencyMs ?? null,
    e.webhook?.calls ?? null,
    e.latencyMs,
    e.policy,
    e.userOpHash,
  ];
}
