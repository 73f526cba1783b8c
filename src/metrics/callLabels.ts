import { GUARANTEE_REFUSAL_RULES } from '../paymaster/token/guaranteeTerms.js';
import { type CallOutcome, callOutcome } from '../rpc/callOutcome.js';
import type { CallReport } from '../rpc/callReport.js';
import { RPC } from '../rpc/rpcErrors.js';
import { TOKEN_REFUSAL_REASONS } from '../sponsorshipTokens/tokenRefusal.js';

/**
 * The labels of one finished JSON-RPC call, each from a fixed set, so a scrape's series are bounded however many
 * dApps, senders or keys call: an unknown method, rule or reason becomes "other". Never a dApp id, a sender or a
 * key: those belong in the request log, not in a time series per value.
 */
export interface CallLabels {
  readonly method: string;
  readonly mode: 'SPONSORED' | 'ERC20' | 'none';
  readonly outcome: CallOutcome;
  /** Why a call was denied (or `chainFees` for the error of unreadable chain fees), else "none". */
  readonly rule: string;
}

/**
 * The methods the paymaster endpoints serve (src/rpc/registry.ts), plus what a denial at the edge reports, and the MEE
 * sponsor's sign call (api/meeSponsorRoutes.ts).
 */
export const METRIC_METHODS: ReadonlySet<string> = new Set([
  'mee_sponsorshipSign',
  'pm_sponsorUserOperation',
  'pm_getFeeQuoteOrData',
  'pm_getPaymasterStubData',
  'pm_getPaymasterData',
  'pm_validateSponsorshipPolicies',
  'pimlico_getTokenQuotes',
]);

/** A token refusal's rule label: `token_<reason>` (`token_required` as it is). */
const tokenRule = (reason: string): string => (reason.startsWith('token_') ? reason : `token_${reason}`);

/**
 * Every denial rule a call can end with: the policy engine's (src/policies/policyRules.ts), the signing bounds'
 * (BoundsRule), the webhook's outcome and failure reasons (webhookCaller.ts), the token guarantees' refusals, the fee
 * and solvency guards'.
 */
export const METRIC_RULES: ReadonlySet<string> = new Set([
  // policies
  'policyNotFound',
  'noPolicyApplies',
  'senderBlocked',
  'senderNotAllowed',
  'deploymentNotSponsored',
  'maxFeePerGas',
  'undecodableCall',
  'contractNotAllowed',
  'methodNotAllowed',
  'cap',
  'priceUnavailable',
  // signing bounds (maxFeePerGas is shared with the policies' ceiling)
  'maxPriorityFeePerGas',
  'callGasLimit',
  'verificationGasLimit',
  'preVerificationGas',
  'maxOpCost',
  // webhooks
  'webhook_denied',
  'webhook_timeout',
  'webhook_http_status',
  'webhook_redirect',
  'webhook_invalid_response',
  'webhook_response_too_large',
  'webhook_connection_failed',
  'webhook_forbidden_address',
  // the key's caller restrictions (dappSettings/callerRestrictions.ts)
  'origin',
  'ip',
  'method',
  // the dApp's sponsorship tokens (sponsorshipTokens/tokenRefusal.ts), as token_<reason>
  ...TOKEN_REFUSAL_REASONS.map(tokenRule),
  // the dApp's token guarantees (paymaster/token/guaranteeTerms.ts)
  ...GUARANTEE_REFUSAL_RULES,
  // guards
  'chainFees',
  'solvency',
  'signer',
]);

function dataField(data: unknown, field: string): string | undefined {
  if (typeof data !== 'object' || data === null || !(field in data)) return undefined;
  const value = (data as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}

function bounded(value: string | undefined): string {
  return value !== undefined && METRIC_RULES.has(value) ? value : 'other';
}

function ruleOf(code: number, data: unknown): string {
  if (code === RPC.SPONSORSHIP_DENIED) return 'webhook_denied';
  if (code === RPC.SPONSORSHIP_TOKEN) {
    const reason = dataField(data, 'reason');
    return bounded(reason === undefined ? undefined : tokenRule(reason));
  }
  if (code === RPC.WEBHOOK_FAILED) {
    const reason = dataField(data, 'reason');
    return bounded(reason === undefined ? undefined : `webhook_${reason}`);
  }
  return bounded(dataField(data, 'rule'));
}

export function callLabels(report: CallReport): CallLabels {
  const method = METRIC_METHODS.has(report.method) ? report.method : 'other';
  let mode: CallLabels['mode'] = 'none';
  for (const fact of report.facts) {
    if (fact.kind === 'op' || fact.kind === 'signed') mode = fact.mode;
  }
  const outcome = callOutcome(report);
  const { error } = report;
  // Unreadable chain fees end as an error (transient: nothing was refused), yet their guard is what an alert on
  // rule="chainFees" watches (ops/prometheus/patron.rules.yml).
  const rule =
    error === undefined
      ? 'none'
      : outcome === 'denied'
        ? ruleOf(error.code, error.data)
        : error.code === RPC.FEES_UNAVAILABLE
          ? 'chainFees'
          : 'none';
  return { method, mode, outcome, rule };
}
