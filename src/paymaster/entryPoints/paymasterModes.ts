import type { Address, Hex } from 'viem';

/** The mode byte of Patron's paymasters (both contracts) and the token mode's signed fields. */

export const MODE_SPONSORED = 0;
export const MODE_TOKEN = 1;
/** The token mode for an op that batches its approval: collected in postOp, its failure sponsored (docs/guides/token-mode.md). */
export const MODE_TOKEN_GUARANTEED = 2;
/** The token mode with the account's EIP-2612 permit, executed in validation before mode 1's prefund. */
export const MODE_TOKEN_PERMIT = 3;

/** The contracts' MAX_PERMIT_SIGNATURE_LENGTH: the longest permit signature mode 3 carries, in bytes. */
export const MAX_PERMIT_SIGNATURE_LENGTH = 2048;

/**
 * The account's EIP-2612 permit that mode 3 carries and executes: Permit(owner = the sender, spender = the
 * paymaster, value, the token's nonce, deadline = max uint256), signed by the account (docs/guides/token-mode.md).
 */
export interface TokenPermit {
  /** The allowance it sets for the paymaster (uint256). */
  readonly value: bigint;
  /** The account's signature, without an ERC-6492 wrapper; at most MAX_PERMIT_SIGNATURE_LENGTH bytes. */
  readonly signature: Hex;
}

/** What the token mode signs beyond the sponsored mode's fields. */
export interface TokenPaymasterFields {
  readonly token: Address;
  /** Token base units per 1e18 wei (uint128). */
  readonly exchangeRate: bigint;
  /** Parts per million, 1e6 = no premium (uint32, the contract accepts 1e6..2e6). */
  readonly priceMarkup: number;
  /** The most the op may be charged, in token base units (uint128). */
  readonly maxTokenCost: bigint;
  /**
   * Mode 2 instead of 1 (the mode byte, which the hash covers): the op's approval is batched in its callData, so
   * the charge may be collected in postOp, and its failure is paid by the deposit (docs/guides/token-mode.md).
   */
  readonly guaranteed?: boolean | undefined;
  /** Mode 3 instead of 1: the permit validation executes before the prefund (never with `guaranteed`). */
  readonly permit?: TokenPermit | undefined;
}

/** The mode byte of token fields: 1 (prefunded), 2 (guaranteed) or 3 (prefunded after the account's permit). */
export const tokenModeOf = (f: {
  readonly guaranteed?: boolean | undefined;
  readonly permit?: TokenPermit | undefined;
}): number => {
  if (f.permit !== undefined) return MODE_TOKEN_PERMIT;
  return f.guaranteed === true ? MODE_TOKEN_GUARANTEED : MODE_TOKEN;
};
