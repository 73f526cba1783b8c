import type { Address, Hex } from 'viem';
import { approvalAmountOffsets } from '../entryPoints/approvalAmounts.js';

/**
 * The largest `approve(spender, amount)` found in an account's callData, or undefined: the same scan as the
 * contract's `_approvesPaymaster` (approvalAmounts.ts). Which token the approval targets is not known here, as
 * on-chain; the service's simulation settles that.
 */
export function approvalInCallData(callData: Hex, spender: Address): bigint | undefined {
  let best: bigint | undefined;
  for (const at of approvalAmountOffsets({ callData, spender })) {
    const amount = BigInt(`0x${callData.slice(at, at + 64)}`);
    if (best === undefined || amount > best) best = amount;
  }
  return best;
}
