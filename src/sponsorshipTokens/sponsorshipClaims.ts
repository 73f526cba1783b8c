import type { Address } from 'viem';
import { refuse, type TokenRefusal } from './tokenRefusal.js';

/** What a verified token says, whatever its format. Times in Unix seconds. */
export interface SponsorshipClaims {
  readonly format: 'jwt' | 'eip712';
  /** The end user's id in the dApp: the `user` scope of caps. */
  readonly sub: string;
  /** The dApp's id (JWT `aud`, voucher `dapp`). */
  readonly aud: string;
  readonly exp: number;
  readonly jti: string;
  /** The only smart account the token sponsors. */
  readonly sender?: Address | undefined;
  /**
   * The end user's own address, a JWT's `addr` claim or a voucher's `addr` field: the holder a policy's gating rule with
   * `subject: 'user'` reads (policies/gatingRules.ts), whichever of the person's wallets sends the op.
   */
  readonly addr?: Address | undefined;
  /** The most the op may cost (its worst case, wei). */
  readonly maxCostWei?: bigint | undefined;
  /** The only contracts the op may call (checksummed). */
  readonly contracts?: readonly Address[] | undefined;
  /** Which registered key verified it (its id, the JWK `kid`, or the signer address): for the log. */
  readonly keyId: string;
}

export type TokenVerdict =
  | { readonly ok: true; readonly claims: SponsorshipClaims }
  | { readonly ok: false; readonly refusal: TokenRefusal };

/** The dApp-independent rules on a token's times. */
export interface TokenTimeRules {
  readonly nowSeconds: number;
  /** `exp` may be at most this far from now (PATRON_SPONSORSHIP_TOKEN_MAX_LIFETIME_SECONDS, when wired). */
  readonly maxLifetimeSeconds: number;
  /** Tolerated difference between the dApp's clock and Patron's. */
  readonly clockSkewSeconds: number;
}

export const DEFAULT_CLOCK_SKEW_SECONDS = 30;

/**
 * `exp` in the past (beyond the skew), `nbf`/`iat` in the future (beyond the skew), and `exp` further than the
 * maximum lifetime from now are refused. The lifetime is measured from now, not from `iat`, which the issuer sets:
 * a token is never usable for longer than the maximum, whatever it claims.
 */
export function checkTokenTimes(args: {
  exp: number;
  nbf?: number | undefined;
  iat?: number | undefined;
  rules: TokenTimeRules;
}): TokenRefusal | undefined {
  const { exp, nbf, iat, rules } = args;
  const { nowSeconds: now, clockSkewSeconds: skew } = rules;
  if (exp <= now - skew) return refuse('expired', `the sponsorship token expired at ${exp} (now ${now})`);
  if (nbf !== undefined && nbf > now + skew) {
    return refuse('not_yet_valid', `the sponsorship token is not valid before ${nbf} (now ${now})`);
  }
  if (iat !== undefined && iat > now + skew) {
    return refuse('not_yet_valid', `the sponsorship token is issued in the future (iat ${iat}, now ${now})`);
  }
  if (exp > now + rules.maxLifetimeSeconds + skew) {
    return refuse(
      'lifetime_too_long',
      `the sponsorship token's exp is more than ${rules.maxLifetimeSeconds} s from now: issue shorter-lived tokens`,
    );
  }
  return undefined;
}

/** The per-call bounds a token may carry, checked against the op being sponsored. */
export function checkBoundClaims(args: {
  claims: SponsorshipClaims;
  sender: Address;
  worstCaseWei: bigint;
  /** The contracts the op calls (as the policy engine decodes them), checksummed. */
  calledContracts: readonly Address[];
}): TokenRefusal | undefined {
  const { claims } = args;
  if (claims.sender !== undefined && claims.sender.toLowerCase() !== args.sender.toLowerCase()) {
    return refuse('sender_mismatch', `the sponsorship token is bound to sender ${claims.sender}, not ${args.sender}`);
  }
  if (claims.maxCostWei !== undefined && args.worstCaseWei > claims.maxCostWei) {
    return refuse(
      'cost_above_bound',
      `the op may cost ${args.worstCaseWei} wei, above the sponsorship token's maxCostWei ${claims.maxCostWei}`,
    );
  }
  if (claims.contracts !== undefined) {
    const allowed = new Set(claims.contracts.map((c) => c.toLowerCase()));
    const outside = args.calledContracts.find((c) => !allowed.has(c.toLowerCase()));
    if (outside !== undefined) {
      return refuse('contract_not_allowed', `the op calls ${outside}, which the sponsorship token does not allow`);
    }
  }
  return undefined;
}
