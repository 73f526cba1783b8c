import type { ChainRuntime } from '../chain/chainRegistry.js';
import type { ChainFees, FeeOracle } from '../chain/feeOracle.js';
import type { SigningBounds } from '../config/boundsSettings.js';
import { BoundsExceededError, type BoundsRule, FeesUnavailableError } from '../errors/PatronError.js';

/**
 * The signing bounds (docs/guides/signing-bounds.md, "Signing bounds"): pure checks of an op's fees against the chain's current fees and
 * the bounds that apply to the request (its gas: gasBounds.ts). Every paymaster method runs them before it signs
 * (and the stub and quotes too, so a client learns early): an op out of bounds is refused with the rule, the
 * value and the bound, whatever the dApp's webhook said.
 */
export interface FeeSnapshot {
  readonly baseFee: bigint;
  readonly tip: bigint;
}

const PPM = 1_000_000n;

/** The largest tip (wei per gas) Patron signs for: the chain's tip × the multiplier, never below the floor. */
export function tipCap(bounds: SigningBounds, fees: FeeSnapshot): bigint {
  const scaled = (fees.tip * bounds.tipMultiplierPpm) / PPM;
  return scaled > bounds.minTipCapWei ? scaled : bounds.minTipCapWei;
}

/** The largest maxFeePerGas Patron signs for: baseFee × the multiplier + the tip cap. */
export function maxFeeCap(bounds: SigningBounds, fees: FeeSnapshot): bigint {
  return (fees.baseFee * bounds.baseFeeMultiplierPpm) / PPM + tipCap(bounds, fees);
}

function deny(rule: BoundsRule, value: bigint, bound: bigint, unit: string, extra?: Record<string, string>): never {
  throw new BoundsExceededError({ rule, value, bound, unit, ...(extra === undefined ? {} : { extra }) });
}

/** The op's fees against the chain's: runs before anything else (no webhook call, no simulation for junk). */
export function assertFeesWithinBounds(
  op: { readonly maxFeePerGas: bigint; readonly maxPriorityFeePerGas: bigint },
  fees: FeeSnapshot,
  bounds: SigningBounds,
): void {
  const tips = tipCap(bounds, fees);
  if (op.maxPriorityFeePerGas > tips) {
    deny('maxPriorityFeePerGas', op.maxPriorityFeePerGas, tips, 'wei per gas', { chainTip: fees.tip.toString() });
  }
  const feeCap = (fees.baseFee * bounds.baseFeeMultiplierPpm) / PPM + tips;
  if (op.maxFeePerGas > feeCap) {
    deny('maxFeePerGas', op.maxFeePerGas, feeCap, 'wei per gas', { baseFee: fees.baseFee.toString() });
  }
}

/**
 * The chain's current fees (and its latest block's time), or FeesUnavailableError: a chain that cannot be read
 * denies, it does not sign.
 */
export async function chainFees(oracle: FeeOracle, chain: ChainRuntime): Promise<ChainFees> {
  const fees = await oracle.get(chain);
  if (fees === undefined) throw new FeesUnavailableError(chain.chainId);
  return fees;
}
