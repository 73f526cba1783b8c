import { type Address, type Hex, size, slice } from 'viem';
import { toAddress } from '../crypto/address.js';

/** One call a smart account will make, as a contract allowlist checks it (policies/accountCalls.ts). */
export interface AccountCall {
  readonly to: Address;
  readonly value: bigint;
  /**
   * The call's data, or only its selector when `runtimeArguments` is set: a composable call's arguments may be
   * fetched on chain when it runs, so they are not known when Patron signs (an allowlist checks target and
   * selector, never arguments).
   */
  readonly data: Hex;
  /** The called method's selector, or undefined for a call without data (a plain transfer). */
  readonly selector: Hex | undefined;
  readonly runtimeArguments?: true;
}

/** A decoder's answer: the calls, or why they cannot be known. */
export type Decoded = readonly AccountCall[] | string;

export const accountCall = (to: Address, value: bigint, data: Hex): AccountCall => ({
  to: toAddress(to),
  value,
  data,
  selector: size(data) >= 4 ? slice(data, 0, 4) : undefined,
});
