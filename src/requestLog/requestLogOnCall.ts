import type { RequestFact } from '../paymaster/requestFacts.js';
import { callOutcome } from '../rpc/callOutcome.js';
import type { CallReport, OnCall } from '../rpc/callReport.js';
import { RPC, type RpcErrorObject } from '../rpc/rpcErrors.js';
import type { RequestLogPolicy } from '../store/records.js';
import type { RequestLogRecord } from './requestLogRecord.js';
import type { RequestLogSink } from './requestLogRecorder.js';

/**
 * The request log's observer of paymaster calls: turns one finished call (its facts, its outcome) into one
 * record (requestLogRecord.ts). Called on the request path: it builds one array and hands it to the sink (an in-memory append); the
 * userOpHash of a signed op (unless already known), ids, normalisation and SQL happen where the writer runs.
 */
export function requestLogOnCall(sink: RequestLogSink): OnCall {
  return (report) => sink.record(toRecord(report));
}

function toRecord(r: CallReport): RequestLogRecord {
  let op: Extract<RequestFact, { kind: 'op' }> | undefined;
  let webhook: Extract<RequestFact, { kind: 'webhook' }> | undefined;
  let policy: Extract<RequestFact, { kind: 'policy' }> | undefined;
  let signed: Extract<RequestFact, { kind: 'signed' }> | undefined;
  for (const f of r.facts) {
    if (f.kind === 'op') op = f;
    else if (f.kind === 'webhook') webhook = f;
    else if (f.kind === 'policy') policy = f;
    else signed = f;
  }
  const { error } = r;
  return [
    r.at,
    r.accountId,
    r.dappId,
    r.chainId,
    r.method,
    op?.mode ?? null,
    op?.sender ?? null,
    callOutcome(r),
    error?.code ?? null,
    error === undefined ? null : reasonOf(error),
    webhook === undefined ? null : webhook.allowed,
    webhook?.reason ?? null,
    webhook === undefined ? null : webhook.latencyMs,
    webhook === undefined ? null : webhook.calls,
    r.latencyMs,
    policyOf(policy, error),
    signed === undefined ? null : signed.userOpHash(),
  ];
}

function policyOf(
  fact: Extract<RequestFact, { kind: 'policy' }> | undefined,
  error: RpcErrorObject | undefined,
): RequestLogPolicy | null {
  if (error?.code === RPC.POLICY_DENIED) {
    const data = (error.data ?? {}) as { rule?: unknown; policyId?: unknown };
    return {
      decision: 'denied',
      ...(typeof data.rule === 'string' ? { rule: data.rule } : {}),
      ...(typeof data.policyId === 'string' ? { policyId: data.policyId } : {}),
    };
  }
  if (fact === undefined) return null;
  const d = fact.decision;
  // A guaranteed token op (mode 2) is logged even without policies: which token mode was signed is its fact.
  if (d.policyIds.length === 0 && d.guarantee !== true) return null;
  return {
    decision: 'passed',
    policyIds: d.policyIds,
    ...(d.reservationId === undefined ? {} : { reservationId: d.reservationId }),
    ...(d.charges.length === 0 ? {} : { reserved: d.charges.map((c) => ({ unit: c.unit, amount: c.amount })) }),
    ...(d.guarantee === true ? { guarantee: true } : {}),
  };
}

function reasonOf(error: RpcErrorObject): string {
  // A token refusal's data.reason is a bare name (expired); its message names it and says what was wrong.
  if (error.code === RPC.SPONSORSHIP_TOKEN) return error.message;
  const data = error.data;
  if (typeof data === 'object' && data !== null && 'reason' in data && typeof data.reason === 'string') {
    return data.reason;
  }
  return error.message;
}
