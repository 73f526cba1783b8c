import type { Eip1193Request } from '../chain/chainRegistry.js';
import { ValidationError } from '../errors/PatronError.js';
import type { ValidityWindow } from './entryPoints/entryPointModule.js';
import { BLOCK_RANGE_FLAG } from './entryPoints/v07/patronPaymasterV07.js';

/**
 * Validity windows as Patron issues and accepts them: in unix seconds (every EntryPoint), or on EntryPoint v0.9
 * when the client asks (`validityUnit: "blocks"`), in block numbers with bit 47 (BLOCK_RANGE_FLAG) set on both
 * bounds, which the v0.9 EntryPoint compares with block.number instead of block.timestamp.
 *
 * A block window must not outlast the time-based policy (PATRON_EXPIRY_MAX_SECONDS) in real time. Its real length
 * is its blocks times the chain's block time, so the blocks are counted with an upper bound of that time: the
 * chain's `maxBlockTimeSeconds`, by default SECONDS_PER_BLOCK, Ethereum's 12-second slot, which every rollup beats
 * (a 2-second L2 left at the default gets a window 6 times shorter than the policy, never longer; its operator
 * sets 2). Only a chain that stalls below one block per bound stretches it in real time; the spend ledger and the
 * solvency guard hold a block window's signature until the chain's block number is past it (chainWindowOf), so a
 * stall never frees its reservation early.
 */
export const SECONDS_PER_BLOCK = 12;

/** The seconds per block a chain's block windows are counted at (the bound above). */
export const secondsPerBlock = (chain: { readonly maxBlockTimeSeconds?: number | undefined }): number =>
  chain.maxBlockTimeSeconds ?? SECONDS_PER_BLOCK;

export type ValidityUnit = 'seconds' | 'blocks';

/**
 * A window with the unix second by which it has surely closed (`expiresAt`): what the spend ledger, the policy
 * reservations and the request log key expiry by. For a time window it is validUntil; for a block window the time
 * its last block comes at the chain's bound (secondsPerBlock).
 */
export interface IssuedWindow extends ValidityWindow {
  readonly expiresAt: number;
}

export interface WindowPolicy {
  readonly defaultExpirySeconds: number;
  readonly maxExpirySeconds: number;
  readonly validAfterSkewSeconds: number;
}

const MASK = BLOCK_RANGE_FLAG - 1;

/** What EntryPoint v0.9 reads as a block window: both bounds strictly above the flag (EntryPoint._getValidationData). */
export function isBlockWindow(w: ValidityWindow): boolean {
  return w.validUntil > BLOCK_RANGE_FLAG && w.validAfter > BLOCK_RANGE_FLAG;
}

/**
 * The window as the chain checks it: `validUntil` in unix seconds (every EntryPoint compares it with
 * block.timestamp), or a v0.9 block window's last block (compared with block.number). The spend ledger and the
 * solvency guard let go of a signature only once the chain is past it.
 */
export function chainWindowOf(w: ValidityWindow): { readonly unit: 'seconds' | 'blocks'; readonly until: number } {
  return isBlockWindow(w)
    ? { unit: 'blocks', until: w.validUntil - BLOCK_RANGE_FLAG }
    : { unit: 'seconds', until: w.validUntil };
}

/** The chain's head, read afresh (viem's getBlockNumber caches it for seconds). */
export async function currentBlockNumber(request: Eip1193Request): Promise<number> {
  return Number(BigInt(String(await request({ method: 'eth_blockNumber' }))));
}

/**
 * The clocks a window is set by: the server's, and the chain's, its latest block's timestamp (the fee oracle reads
 * that block anyway: chain/feeOracle.ts). The EntryPoint checks a time window against `block.timestamp`, and Patron's
 * simulation runs at the latest block's, which on an idle chain (the dev chain, a quiet L2) lags the server's clock
 * by minutes or hours, while a chain moved ahead (`evm_increaseTime`) leads it.
 */
export interface WindowClocks {
  readonly nowMs: number;
  /** Unix seconds of the chain's latest block as last read; undefined: not known (the server's clock alone). */
  readonly chainSeconds?: number | undefined;
}

/** The time window of a request: its expiryDuration (or the default), capped by the policy. */
export function timeWindow(
  policy: WindowPolicy,
  clocks: WindowClocks,
  expiryDuration: number | undefined,
): IssuedWindow {
  const w = validityWindow({ policy, ...clocks, expiryDuration });
  return { ...w, expiresAt: w.validUntil };
}

/**
 * The block window of a request: from `skew` blocks back (a bundler whose node lags a block or two still sees the
 * op valid) to the blocks the expiry allows at the chain's bound, at least one.
 */
export function blockWindow(args: {
  readonly policy: WindowPolicy;
  readonly nowMs: number;
  readonly expiryDuration: number | undefined;
  readonly currentBlock: number;
  /** An upper bound of the chain's block time (secondsPerBlock). */
  readonly secondsPerBlock: number;
}): IssuedWindow {
  const { policy, secondsPerBlock: perBlock } = args;
  const expiry = Math.min(args.expiryDuration ?? policy.defaultExpirySeconds, policy.maxExpirySeconds);
  const blocks = Math.max(1, Math.floor(expiry / perBlock));
  const skew = Math.ceil(policy.validAfterSkewSeconds / perBlock);
  const until = args.currentBlock + blocks;
  if (until > MASK) throw new ValidationError('the chain is past the block numbers a v0.9 window can name');
  return {
    validUntil: BLOCK_RANGE_FLAG + until,
    // Block 0 would be the bare flag, which v0.9 reads as a timestamp: the window opens after block 1 at the earliest.
    validAfter: BLOCK_RANGE_FLAG + Math.max(1, args.currentBlock - skew),
    expiresAt: Math.floor(args.nowMs / 1000) + Math.ceil(blocks * perBlock),
  };
}

/**
 * Checks a window Patron issued earlier (a parallel-signing commit) against the policy now, and gives its expiry
 * time: not closed yet, not longer from now than the policy's maximum, open now or within the skew. Mixed bounds
 * (one in blocks, one in seconds) are invalid on v0.9 and refused.
 */
export function checkIssuedWindow(args: {
  readonly window: ValidityWindow;
  readonly policy: WindowPolicy;
  readonly nowMs: number;
  /** The chain's latest block time (unix seconds), as the window was issued on (validityWindow). */
  readonly chainSeconds?: number | undefined;
  /** Required for a block window. */
  readonly currentBlock?: number | undefined;
  /** An upper bound of the chain's block time (secondsPerBlock). */
  readonly secondsPerBlock: number;
}): IssuedWindow {
  const { window: w, policy, secondsPerBlock: perBlock } = args;
  const untilFlagged = isBlockWindow(w);
  if (!untilFlagged && (w.validUntil >= BLOCK_RANGE_FLAG || w.validAfter >= BLOCK_RANGE_FLAG)) {
    throw new ValidationError('the committed window mixes a block number and a timestamp');
  }
  // The later clock: a window is issued up to the expiry after it (validityWindow), and refused as expired only when
  // closed for both.
  const now = Math.max(Math.floor(args.nowMs / 1000), args.chainSeconds ?? 0);
  if (!untilFlagged) {
    if (w.validUntil === 0 || w.validUntil <= now) throw new ValidationError('the committed window has expired');
    if (w.validUntil > now + policy.maxExpirySeconds) {
      throw new ValidationError(`the committed window lasts more than ${policy.maxExpirySeconds} s from now`);
    }
    if (w.validAfter > now + policy.validAfterSkewSeconds) {
      throw new ValidationError('the committed window opens in the future');
    }
    return { ...w, expiresAt: w.validUntil };
  }
  const head = args.currentBlock;
  if (head === undefined) throw new ValidationError('a block window needs the current block');
  const until = w.validUntil - BLOCK_RANGE_FLAG;
  const after = w.validAfter - BLOCK_RANGE_FLAG;
  const maxBlocks = Math.max(1, Math.floor(policy.maxExpirySeconds / perBlock));
  // v0.9 refuses an op when block.number > validUntil or <= validAfter; the op lands in a later block than `head`.
  if (until <= head) throw new ValidationError(`the committed window has expired (block ${until}, now ${head})`);
  if (until > head + maxBlocks) {
    throw new ValidationError(`the committed window lasts more than ${maxBlocks} blocks from now`);
  }
  if (after > head + Math.ceil(policy.validAfterSkewSeconds / perBlock)) {
    throw new ValidationError('the committed window opens at a future block');
  }
  return { ...w, expiresAt: now + Math.ceil((until - head) * perBlock) };
}

/**
 * `validUntil`/`validAfter` (unix seconds) for a request: its expiryDuration (or the default), capped, on both clocks.
 * - `validAfter` = the earlier of the chain's and the server's time, minus the skew: open in Patron's simulation
 *   (at the latest block's timestamp) and for a bundler whose clock lags.
 * - `validUntil` = the later of the two, plus the expiry: never already closed for a chain ahead of the server, and
 *   never longer in the chain's time than the expiry plus the chain's lag behind the server (the time its next block
 *   will carry catches up with the server's clock). The spend ledger holds it until then (expiresAt).
 */
export function validityWindow(args: {
  readonly policy: WindowPolicy;
  readonly nowMs: number;
  readonly chainSeconds?: number | undefined;
  readonly expiryDuration: number | undefined;
}): { validUntil: number; validAfter: number } {
  const { policy } = args;
  const server = Math.floor(args.nowMs / 1000);
  const chain = args.chainSeconds ?? server;
  const expiry = Math.min(args.expiryDuration ?? policy.defaultExpirySeconds, policy.maxExpirySeconds);
  return {
    validUntil: Math.max(server, chain) + expiry,
    validAfter: Math.max(0, Math.min(server, chain) - policy.validAfterSkewSeconds),
  };
}
