import { GUARANTEE_REFUSAL_RULES } from '../paymaster/token/guaranteeTerms.js';
import type { CallReport } from './callReport.js';
import { RPC } from './rpcErrors.js';

/**
 * How a finished paymaster call ended, the one split the request log and the metrics both report:
 * - `sponsored`: a signed paymasterAndData, whichever mode pays (the method's declared outcome `signs`);
 * - `quoted`: answered without a usable signature (an ERC-20 fee quote or rate, the ERC-7677 stub, the policies' dry
 *   run, the EntryPoints served): the method's declared outcome `quotes` or `dryRun`;
 * - `denied`: the request itself was refused (the key's caller restrictions, the dApp's sponsorship token, the webhook, a policy, the dApp's token guarantees, the signing bounds, the solvency guard, the signer watch);
 * - `error`: anything else, invalid params included.
 */
export type CallOutcome = 'sponsored' | 'quoted' | 'denied' | 'error';

const DENIALS: ReadonlySet<number> = new Set([
  RPC.SPONSORSHIP_DENIED,
  RPC.WEBHOOK_FAILED,
  RPC.POLICY_DENIED,
  RPC.OUT_OF_BOUNDS,
  RPC.INSOLVENT,
  RPC.SIGNER_NOT_ACCEPTED,
  RPC.CALLER_NOT_ALLOWED,
  RPC.SPONSORSHIP_TOKEN,
]);

const GUARANTEE_RULES: ReadonlySet<unknown> = new Set(GUARANTEE_REFUSAL_RULES);

/**
 * A refusal, by code; and among the token mode's -32021 (mostly the account's own shortfall: balance, approval) the
 * dApp's guarantee refused by its setting (`data.rule` guaranteeOff, guaranteeKeyFamily, guaranteeCap).
 */
export function isDenial(code: number, data?: unknown): boolean {
  if (DENIALS.has(code)) return true;
  if (code !== RPC.TOKEN_PAYMENT || typeof data !== 'object' || data === null) return false;
  return GUARANTEE_RULES.has((data as { rule?: unknown }).rule);
}

/** The outcome the method declared (rpc/rpcMethod.ts MethodOutcome), or the error's kind. */
export function callOutcome(report: Pick<CallReport, 'outcome' | 'error'>): CallOutcome {
  if (report.error !== undefined) return isDenial(report.error.code, report.error.data) ? 'denied' : 'error';
  return report.outcome === 'signs' ? 'sponsored' : 'quoted';
}
