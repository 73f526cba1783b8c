import type { RequestTrace } from '../paymaster/sponsorshipService.js';
import type { RequestLogSink } from '../requestLog/requestLogRecorder.js';
import type { RequestOutcome } from '../store/records.js';
import { RPC, type RpcErrorObject } from './rpcErrors.js';
import type { RpcContext } from './rpcMethod.js';

/**
 * Turns one finished JSON-RPC call into a request-log entry. Called on the hot path: builds one object and
 * hands it to the sink (an in-memory append); the rest (ids, normalisation, SQL) happens at flush time.
 */
export function recordCall(args: {
  sink: RequestLogSink;
  ctx: RpcContext;
  method: string;
  trace: RequestTrace;
  latencyMs: number;
  result?: unknown;
  error?: RpcErrorObject;
}): void {
  const { trace, error } = args;
  const webhook = trace.webhook;
  args.sink.record({
    // When the call began, from one wall-clock read at its end.
    at: Math.round(Date.now() - args.latencyMs),
    accountId: args.ctx.dapp.accountId,
    dappId: args.ctx.dapp.id,
    chainId: args.ctx.chain.chainId,
    method: args.method,
    mode: trace.mode ?? null,
    sender: trace.sender ?? null,
    outcome: error === undefined ? successOutcome(args.method, args.result) : errorOutcome(error.code),
    errorCode: error?.code ?? null,
    reason: error === undefined ? null : reasonOf(error),
    webhook:
      webhook === undefined
        ? null
        : {
            allowed: webhook.allowed,
            reason: webhook.reason ?? null,
            latencyMs: webhook.latencyMs,
            calls: webhook.calls,
          },
    latencyMs: args.latencyMs,
  });
}

/**
 * `quoted`: answered without a usable signature (an ERC-20 fee quote, `{mode: 'ERC20', feeQuotes}`, or the
 * ERC-7677 stub). Any other success carries a signed paymasterAndData: `sponsored`, whichever mode paid.
 */
function successOutcome(method: string, result: unknown): RequestOutcome {
  if (method === 'pm_getPaymasterStubData') return 'quoted';
  if (typeof result === 'object' && result !== null && 'feeQuotes' in result) return 'quoted';
  return 'sponsored';
}

/** Refusals of the request itself (the webhook's, or the signing bounds'), as against failures. */
const DENIALS: ReadonlySet<number> = new Set([
  RPC.SPONSORSHIP_DENIED,
  RPC.WEBHOOK_FAILED,
  RPC.POLICY_DENIED,
  RPC.OUT_OF_BOUNDS,
]);

function errorOutcome(code: number): RequestOutcome {
  return DENIALS.has(code) ? 'denied' : 'error';
}

function reasonOf(error: RpcErrorObject): string {
  const data = error.data;
  if (typeof data === 'object' && data !== null && 'reason' in data && typeof data.reason === 'string') {
    return data.reason;
  }
  return error.message;
}
