/** Why a sponsorship token is refused: stable names for the wire's `error.data.reason` and the request log. */
export const TOKEN_REFUSAL_REASONS = [
  /** The dApp requires a token and the call carries none. */
  'token_required',
  'malformed',
  'algorithm_not_allowed',
  'unknown_key',
  'bad_signature',
  'keys_unavailable',
  'missing_claim',
  'expired',
  'not_yet_valid',
  'lifetime_too_long',
  'wrong_audience',
  'replayed',
  'sender_mismatch',
  'cost_above_bound',
  'contract_not_allowed',
] as const;
export type TokenRefusalReason = (typeof TOKEN_REFUSAL_REASONS)[number];

export interface TokenRefusal {
  readonly reason: TokenRefusalReason;
  /** Safe to show to the caller: names the claim or rule and what to do; never key material. */
  readonly message: string;
}

export const refuse = (reason: TokenRefusalReason, message: string): TokenRefusal => ({ reason, message });
