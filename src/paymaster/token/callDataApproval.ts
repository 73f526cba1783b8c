import type { Address, Hex } from 'viem';

/** ERC-20 approve(address,uint256). */
const APPROVE_SELECTOR = '095ea7b3';

/**
 * The largest `approve(spender, amount)` found in an account's callData, or undefined: the same scan as the
 * contract's `_approvesPaymaster`. Accounts ABI-encode inner calls as `bytes`, whose contents start on a 32-byte
 * boundary after the 4-byte selector, so only offsets 4 + 32k are looked at (hex string offsets 2 + 8 + 64k).
 * Which token the approval targets is not known here, as on-chain; the service's simulation settles that.
 */
export function approvalInCallData(callData: Hex, spender: Address): bigint | undefined {
  const hex = callData.toLowerCase();
  const spenderWord = `${'0'.repeat(24)}${spender.slice(2).toLowerCase()}`;
  let best: bigint | undefined;
  // A match needs 4 + 32 + 32 bytes = 136 hex characters from its start.
  for (let i = 2 + 8; i + 136 <= hex.length; i += 64) {
    if (hex.startsWith(APPROVE_SELECTOR, i) && hex.startsWith(spenderWord, i + 8)) {
      const amount = BigInt(`0x${hex.slice(i + 72, i + 136)}`);
      if (best === undefined || amount > best) best = amount;
    }
  }
  return best;
}
