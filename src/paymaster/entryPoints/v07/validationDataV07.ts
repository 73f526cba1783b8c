import type { EntryPointV07Version } from '../../../chain/entryPoints.js';

/**
 * The `validationData` an account or paymaster returns, as EntryPoint v0.7-v0.9 read it:
 * `validAfter(6) ‖ validUntil(6) ‖ aggregatorOrSigFail(20)`, validUntil 0 meaning "no end". v0.9 also accepts
 * a window in block numbers: both bounds with bit 47 set (the low 47 bits are then block numbers).
 *
 * simulateHandleOp returns these instead of checking them (handleOps reverts on them), so the simulation
 * applies the EntryPoint's own rule here, with its own reason strings.
 */
export interface ValidationData {
  /** 0: valid signature; 1: signature failure; anything else: an aggregator the op would need. */
  readonly aggregator: bigint;
  readonly validAfter: bigint;
  /** Already mapped from 0 to the largest uint48. */
  readonly validUntil: bigint;
}

const UINT48_MAX = (1n << 48n) - 1n;
const BLOCK_RANGE_FLAG = 1n << 47n;
const BLOCK_RANGE_MASK = BLOCK_RANGE_FLAG - 1n;

export function parseValidationData(data: bigint): ValidationData {
  const validUntil = (data >> 160n) & UINT48_MAX;
  return {
    aggregator: data & ((1n << 160n) - 1n),
    validAfter: (data >> 208n) & UINT48_MAX,
    validUntil: validUntil === 0n ? UINT48_MAX : validUntil,
  };
}

/** The block the op would be checked in: the EntryPoint compares with its timestamp and number. */
export interface BlockContext {
  readonly timestamp: bigint;
  readonly number: bigint;
}

export type WindowVerdict = 'inside' | 'outside-time' | 'outside-blocks';

/** Whether `data`'s window contains `block`, by the rule of `version` (v0.7 admits validAfter itself). */
export function validityWindow(
  version: EntryPointV07Version,
  data: ValidationData,
  block: BlockContext,
): WindowVerdict {
  if (!hasWindow(data)) return 'inside';
  if (version === '0.9' && data.validAfter > BLOCK_RANGE_FLAG && data.validUntil > BLOCK_RANGE_FLAG) {
    const after = data.validAfter & BLOCK_RANGE_MASK;
    const until = data.validUntil & BLOCK_RANGE_MASK;
    return block.number > until || block.number <= after ? 'outside-blocks' : 'inside';
  }
  const notDue = version === '0.7' ? block.timestamp < data.validAfter : block.timestamp <= data.validAfter;
  return block.timestamp > data.validUntil || notDue ? 'outside-time' : 'inside';
}

/** Whether the window needs a block to be judged at all (the common "no window" case needs none). */
export function hasWindow(data: ValidationData): boolean {
  return data.validAfter !== 0n || data.validUntil !== UINT48_MAX;
}

/**
 * The reason handleOps would revert with for these validation data, or undefined when it would accept them;
 * `ignoreSignatureFailure` is for estimation, whose dummy signatures fail by design.
 */
export function validationFailure(args: {
  readonly version: EntryPointV07Version;
  readonly account: ValidationData;
  readonly paymaster: ValidationData;
  readonly block: BlockContext;
  readonly ignoreSignatureFailure: boolean;
}): string | undefined {
  const { version, account, paymaster, block } = args;
  if (account.aggregator === 1n && !args.ignoreSignatureFailure) return 'AA24 signature error';
  if (account.aggregator > 1n) {
    return `AA24 signature error (the account asks for signature aggregator 0x${account.aggregator.toString(16).padStart(40, '0')}, which handleOps does not use)`;
  }
  const accountWindow = validityWindow(version, account, block);
  if (accountWindow === 'outside-blocks') return 'AA27 outside valid block range';
  if (accountWindow === 'outside-time') return 'AA22 expired or not due';
  if (paymaster.aggregator !== 0n && !(paymaster.aggregator === 1n && args.ignoreSignatureFailure)) {
    return 'AA34 signature error';
  }
  const paymasterWindow = validityWindow(version, paymaster, block);
  if (paymasterWindow === 'outside-blocks') return 'AA37 paymaster inval block range';
  if (paymasterWindow === 'outside-time') return 'AA32 paymaster expired or not due';
  return undefined;
}
