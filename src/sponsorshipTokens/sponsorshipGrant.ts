import { SponsorshipTokenError } from '../errors/PatronError.js';
import { decodeAccountCalls } from '../policies/accountCalls.js';
import type { PolicyRequest, PolicyTokenUse, ReservedToken } from '../policies/policyGate.js';
import type { SponsorshipClaims } from './sponsorshipClaims.js';
import type { TokenRefusal } from './tokenRefusal.js';

/**
 * A verified sponsorship token as the paymaster pipeline carries it (sponsorshipTokenGate.ts makes it): its claims,
 * and its `jti` as the one step that issues a signature spends it, once: the op's reservation, in both modes.
 */
export interface SponsorshipGrant extends ReservedToken {
  readonly claims: SponsorshipClaims;
  /**
   * The jti as the spend ledger spends it in the reservation's own transaction (policies/policyGate.ts, `token`):
   * only once the caps took the op, never without its reservation. Throws SponsorshipTokenError `expired` once the
   * token is past its exp and the clock skew (a request that waited on a slow webhook past it).
   */
  use(): PolicyTokenUse;
  /** The refusal of a token whose jti was spent already. */
  replayed(): SponsorshipTokenError;
}

export const tokenRefused = (r: TokenRefusal): SponsorshipTokenError =>
  new SponsorshipTokenError({ reason: r.reason, message: r.message });

/**
 * The token's `contracts` bound against the calls the op makes, decoded exactly as a policy's contract allowlist
 * decodes them (policies/accountCalls.ts, with the sender's account kind): a sender Patron does not know, or a
 * callData it cannot decode, is refused, since nothing then says what the op will call.
 */
export async function assertTokenCalls(args: {
  grant: SponsorshipGrant | undefined;
  request: PolicyRequest;
}): Promise<void> {
  const contracts = args.grant?.claims.contracts;
  if (contracts === undefined) return;
  const { request } = args;
  const account = await request.senderAccount?.();
  if (account === undefined || !account.known) {
    const why = account === undefined ? 'it was not looked up' : account.found.reason;
    throw tokenRefused({
      reason: 'contract_not_allowed',
      message: `the sponsorship token allows listed contracts only, and sender ${request.sender} is not an account Patron knows (${why}), so its callData says nothing of what it will call`,
    });
  }
  const decoded = decodeAccountCalls(request.callData, account.kind);
  if (!decoded.ok) {
    throw tokenRefused({
      reason: 'contract_not_allowed',
      message: `the sponsorship token allows listed contracts only, and this call cannot be checked: ${decoded.reason}`,
    });
  }
  const allowed = new Set(contracts.map((c) => c.toLowerCase()));
  const outside = decoded.calls.find((c) => !allowed.has(c.to.toLowerCase()));
  if (outside !== undefined) {
    throw tokenRefused({
      reason: 'contract_not_allowed',
      message: `the op calls ${outside.to}, which the sponsorship token's contracts do not list`,
    });
  }
}

/** The token's `maxCostWei` against the op's worst case (what the policies reserve and the signing bounds check). */
export function assertTokenCost(args: { grant: SponsorshipGrant | undefined; worstCaseWei: bigint }): void {
  const max = args.grant?.claims.maxCostWei;
  if (max === undefined || args.worstCaseWei <= max) return;
  throw tokenRefused({
    reason: 'cost_above_bound',
    message: `the op may cost ${args.worstCaseWei} wei, above the sponsorship token's maxCostWei ${max}`,
  });
}
