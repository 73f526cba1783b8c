import type { Address } from 'viem';

/** The mode byte of Patron's paymasters (both contracts) and the token mode's signed fields. */

export const MODE_SPONSORED = 0;
export const MODE_TOKEN = 1;
/** The token mode for an op that batches its approval: collected in postOp, its failure sponsored (docs/guides/token-mode.md). */
export const MODE_TOKEN_GUARANTEED = 2;

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
}

/** The mode byte of token fields: 1 (prefunded) or 2 (guaranteed). */
export const tokenModeOf = (f: { readonly guaranteed?: boolean | undefined }): number =>
  f.guaranteed === true ? MODE_TOKEN_GUARANTEED : MODE_TOKEN;
