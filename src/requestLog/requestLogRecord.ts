import type { RequestLogPolicy, RequestOutcome } from '../store/records.js';

/**
 * One paymaster call as the request path records it: positional, primitives only (the policy decision aside, null
 * unless a policy applied). A batch of these crosses to the request log's thread (requestLogThread.ts) as arrays of
 * values, without the sixteen key strings per row an object carries through the structured clone, and the request
 * path allocates one array and no nested objects for it. The row (its id, normalisation) is made where the writer
 * runs (storedEntry.ts).
 */
export type RequestLogRecord = readonly [
  at: number,
  accountId: string,
  dappId: string,
  chainId: number,
  method: string,
  mode: string | null,
  sender: string | null,
  outcome: RequestOutcome,
  errorCode: number | null,
  reason: string | null,
  webhookAllowed: boolean | null,
  webhookReason: string | null,
  webhookLatencyMs: number | null,
  webhookCalls: number | null,
  latencyMs: number,
  policy: RequestLogPolicy | null,
  userOpHash: string | null,
];
