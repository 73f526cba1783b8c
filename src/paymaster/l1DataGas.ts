import type { ChainFees } from '../chain/feeOracle.js';
import type { ArbitrumL1Fee, L1Fee, OpStackL1Fee } from '../chain/readL1Fee.js';
import type { SigningBounds } from '../config/boundsSettings.js';
import { maxBig, minBig } from './maxBig.js';

/**
 * The L2 gas an op's L1 data costs, which a bundler on an L2 adds to its preVerificationGas and Patron's bound adds to
 * its own figure (docs/guides/signing-bounds.md, "L1 data on L2s"). Pure, from the chain's L1 fee read with its block
 * (chain/feeOracle.ts): a few bigint operations per request.
 *
 * Bundlers price the whole bundle transaction (handleOps around the op, in a signed transaction) with the chain's
 * oracle, and divide the fee by an L2 gas price (alto: its own price, min(maxFee, baseFee + tip); Rundler and
 * Skandha: the op's, min(op.maxFeePerGas, baseFee + op.maxPriorityFeePerGas); Arbitrum's node: its L2 base fee).
 * Patron's figure must sit above theirs, so it takes the transaction at its largest (every fee and gas field at 8
 * bytes, as bundlers fill them) and the fee's upper bound for that size (no compression: an op of random bytes does
 * not compress, and the oracles' own upper bounds assume none), and divides by the lowest of those prices.
 */
export interface L1DataPricing {
  /**
   * `bounds.l1DataGasPerByte`: without an oracle the figure itself, per byte of the op's encoding; with one its
   * ceiling (0: none of its own, the oracle's figure stays under maxPreVerificationGas with the rest).
   */
  readonly gasPerByte: bigint;
  readonly oracle?: { readonly fee: L1Fee; readonly l2GasPrice: bigint } | undefined;
}

/** handleOps' selector, the ops array's offset, the beneficiary, the array's length and the op's offset. */
export const HANDLE_OPS_FRAME_BYTES = 4n + 4n * 32n;
/**
 * A signed EIP-1559 transaction around its data, every field at its largest: type, list header (3), chain id, nonce,
 * both fees and gas (9 each), `to` (21), value (9), the data's header (3), access list, y parity, r and s (33 each).
 */
export const SIGNED_TX_BYTES = 1n + 3n + 9n * 5n + 21n + 9n + 3n + 1n + 1n + 33n * 2n;
/** One EIP-7702 authorization in a type-4 transaction: its list header, chain id, address, nonce, y, r, s. */
export const EIP7702_AUTH_BYTES = 2n + 9n + 21n + 9n + 1n + 33n * 2n;
/** What brotli may add to data it cannot compress (Arbitrum prices the compressed transaction). */
const BROTLI_SLACK_BYTES = 16n;

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/**
 * The L2 gas price the L1 fee is divided by: the lowest a bundler divides by for this op. Its fees with the tip at
 * most the chain's (a bundler that prices with its own, higher tip asks less), or the chain's own price for an op
 * not priced yet (maxFeePerGas 0); at least 1 wei.
 */
export function l2GasPrice(
  op: { readonly maxFeePerGas: bigint; readonly maxPriorityFeePerGas: bigint },
  fees: { readonly baseFee: bigint; readonly tip: bigint },
): bigint {
  const price =
    op.maxFeePerGas === 0n
      ? fees.baseFee + fees.tip
      : minBig(op.maxFeePerGas, fees.baseFee + minBig(op.maxPriorityFeePerGas, fees.tip));
  return price > 0n ? price : 1n;
}

/** How one request's op is priced for its L1 data, or undefined when the chain has none to price (an L1). */
export function l1DataPricing(args: {
  readonly bounds: SigningBounds;
  readonly fees: ChainFees;
  readonly op: { readonly maxFeePerGas: bigint; readonly maxPriorityFeePerGas: bigint };
}): L1DataPricing | undefined {
  const gasPerByte = args.bounds.l1DataGasPerByte;
  const fee = args.fees.l1;
  if (fee === undefined) return gasPerByte === 0n ? undefined : { gasPerByte };
  return { gasPerByte, oracle: { fee, l2GasPrice: l2GasPrice(args.op, args.fees) } };
}

/** The L2 gas of an op's L1 data: `bytes` of encoding in handleOps, and whether it carries an EIP-7702 authorization. */
export function l1DataGas(pricing: L1DataPricing, op: { readonly bytes: number; readonly eip7702: boolean }): bigint {
  const ceiling = pricing.gasPerByte * BigInt(op.bytes);
  const oracle = pricing.oracle;
  if (oracle === undefined) return ceiling;
  const txData = BigInt(op.bytes) + HANDLE_OPS_FRAME_BYTES + (op.eip7702 ? EIP7702_AUTH_BYTES : 0n);
  const gas =
    oracle.fee.kind === 'opStack'
      ? ceilDiv(opStackL1FeeUpperBound(oracle.fee, txData + SIGNED_TX_BYTES), oracle.l2GasPrice)
      : arbitrumL1Gas(oracle.fee, txData + SIGNED_TX_BYTES);
  return pricing.gasPerByte === 0n ? gas : minBig(gas, ceiling);
}

// GasPriceOracle's Fjord constants (ethereum-optimism/specs, protocol/fjord/predeploys.md).
const COST_INTERCEPT = -42_585_600n;
const COST_FASTLZ_COEF = 836_500n;
const MIN_TRANSACTION_SIZE_SCALED = 100n * 1_000_000n;

/**
 * GasPriceOracle's fee for a transaction of `unsignedTxSize` bytes at its largest: Fjord's getL1FeeUpperBound (its
 * FastLZ bound, `size/255 + 16` over the size, through the Brotli regression), or on Ecotone getL1Fee with every
 * byte non-zero. Both add 68 bytes for a signature, which bundlers that price a signed transaction count twice.
 */
export function opStackL1FeeUpperBound(fee: OpStackL1Fee, unsignedTxSize: bigint): bigint {
  const feeScaled = fee.baseFeeScalar * 16n * fee.l1BaseFee + fee.blobBaseFeeScalar * fee.blobBaseFee;
  const txSize = unsignedTxSize + 68n;
  if (!fee.fjord) return (txSize * 16n * feeScaled) / (16n * 1_000_000n);
  const flzUpperBound = txSize + txSize / 255n + 16n;
  const estimated = COST_INTERCEPT + COST_FASTLZ_COEF * flzUpperBound;
  const size = maxBig(estimated, MIN_TRANSACTION_SIZE_SCALED);
  return (size * feeScaled) / 1_000_000_000_000n;
}

/**
 * NodeInterface.gasEstimateL1Component's answer for `data` of this size (OffchainLabs/nitro, PosterDataCost and
 * GasEstimateL1Component), at its largest: the node wraps the data in a transaction of its own and compresses it
 * (brotli: at most the size plus a little), prices 16 units a byte, pads the units (+256, then 1 %) and the fee
 * (10 %), and divides by its L2 base fee. Rounded up where the node rounds down.
 */
export function arbitrumL1Gas(fee: ArbitrumL1Fee, dataSize: bigint): bigint {
  const units = 16n * (dataSize + SIGNED_TX_BYTES + BROTLI_SLACK_BYTES);
  const padded = ceilDiv((units + 256n) * 10_100n, 10_000n);
  const l1Fee = ceilDiv(padded * fee.l1PricePerUnit * 11_000n, 10_000n);
  return ceilDiv(l1Fee, fee.l2BaseFee);
}
