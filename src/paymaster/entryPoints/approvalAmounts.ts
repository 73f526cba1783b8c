import type { Address, Hex } from 'viem';

/** ERC-20 approve(address,uint256). */
const APPROVE_SELECTOR = '095ea7b3';

/**
 * Where the amount of each `approve(spender, amount)` in an account's callData starts, as offsets into the
 * lower-cased hex string: the same scan as PatronPaymaster's `_approvesPaymaster`. Accounts ABI-encode inner calls as
 * `bytes`, whose contents start on a 32-byte boundary after the 4-byte selector, so only offsets 4 + 32k are looked
 * at (hex string offsets 2 + 8 + 64k). Which token the approval targets is not known here, as on chain.
 */
export function approvalAmountOffsets(args: { readonly callData: Hex; readonly spender: Address }): number[] {
  const hex = args.callData.toLowerCase();
  const spenderWord = `${'0'.repeat(24)}${args.spender.slice(2).toLowerCase()}`;
  const offsets: number[] = [];
  // A match needs 4 + 32 + 32 bytes = 136 hex characters from its start.
  for (let i = 2 + 8; i + 136 <= hex.length; i += 64) {
    if (hex.startsWith(APPROVE_SELECTOR, i) && hex.startsWith(spenderWord, i + 8)) offsets.push(i + 72);
  }
  return offsets;
}

const MAX_AMOUNT_WORD = 'f'.repeat(64);

/**
 * The callData as ERC-20 clients have it estimated: the first approval of `spender` (Patron's paymaster) for the
 * largest amount. permissionless's prepareUserOperationForErc20Paymaster has the op estimated with approve(paymaster,
 * 2^256 - 1), then replaces that amount with the token quote's (mostly zero bytes) and keeps the estimate's
 * preVerificationGas; calldata prices a zero byte at 4 gas and any other at 16, so the op it sends costs less
 * calldata than the one its bundler priced. Pricing the amount words as 0xff (a function of where the approvals are,
 * not of their amounts) covers that estimate; an op with no such approval is returned as it is. Only one approval is
 * priced so: a client estimates the one approval it adds, and every further approval priced at 0xff would be calldata
 * gas the op is allowed without paying for it (~410 gas each, kept by whoever bundles), so an op stuffed with
 * approve(paymaster, 0) would buy unburnt preVerificationGas.
 */
export function approvalsAsEstimated(args: { readonly callData: Hex; readonly spender: Address }): Hex {
  const [at] = approvalAmountOffsets(args);
  if (at === undefined) return args.callData;
  return `${args.callData.slice(0, at)}${MAX_AMOUNT_WORD}${args.callData.slice(at + 64)}` as Hex;
}
