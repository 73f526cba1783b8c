import type { SigningBounds } from '../config/boundsSettings.js';
import { BoundsExceededError, type BoundsRule } from '../errors/PatronError.js';
import { approvalsAsEstimated } from './entryPoints/approvalAmounts.js';
import type {
  EntryPointModule,
  FinalUserOperation,
  GasLimits,
  PaymasterFields,
} from './entryPoints/entryPointModule.js';
import type { L1DataPricing } from './l1DataGas.js';

/**
 * The gas rules of the signing bounds for one op on its EntryPoint version (docs/guides/signing-bounds.md, "Signing bounds"). Besides each
 * field's cap and the worst-case cost, two kinds of gas are paid to whoever bundles the op without being burnt, so an
 * attacker-bundler keeps them, and both are bounded by what the op itself needs:
 * - preVerificationGas, charged in full: at most Patron's own figure for the op's size (the version's calldata
 *   formula with its final-length paymaster fields, plus the gas of its L1 data on an L2: l1DataGas.ts) × the
 *   multiplier + the slack;
 * - the unused-gas penalty (v0.7+): at most `maxUnusedGasPenalty` at the op's limits or caps, whatever the op was
 *   simulated to use (an account can use its gas in Patron's simulation and none at inclusion).
 * And on v0.7+ verificationGasLimit stays below ERC-7562's 500,000, which compliant bundlers enforce.
 */
export interface OpGasBounds {
  readonly bounds: SigningBounds;
  /** Patron's preVerificationGas for the op: what its size and the chain need (its own estimate is this). */
  readonly preVerificationGasNeeded: bigint;
  /** The most preVerificationGas signed for the op: needed × the multiplier + the slack. */
  readonly maxPreVerificationGasForSize: bigint;
  /** `maxVerificationGasLimit`, clamped on v0.7+ below ERC-7562's limit. */
  readonly maxVerificationGasLimit: bigint;
  /** The largest callGasLimit within the penalty bound (-1: none; undefined: the version has no penalty). */
  readonly maxCallGasLimitForPenalty: bigint | undefined;
  /** The most penalty an op with this callGasLimit (and the op's postOp limit) can pay. */
  unusedGasPenalty(callGasLimit: bigint): bigint;
}

const PPM = 1_000_000n;
const min = (a: bigint, b: bigint) => (a < b ? a : b);

/**
 * Patron's preVerificationGas for the op with these (final-length) paymaster fields, the chain's L1 data included:
 * priced by `l1` (l1DataPricing: the chain's L1 fee oracle, under `bounds.l1DataGasPerByte`, or that figure alone).
 * The op's approvals of the paymaster are priced at the largest amount, as ERC-20 clients have the op estimated before
 * they put the quote's amount in (approvalAmounts.ts): the bundler's estimate the client sends is for that op.
 */
export function preVerificationGasNeeded(args: {
  readonly ep: EntryPointModule;
  readonly op: FinalUserOperation;
  readonly fields: PaymasterFields;
  readonly l1: L1DataPricing | undefined;
}): bigint {
  const callData = approvalsAsEstimated({ callData: args.op.callData, spender: args.fields.paymaster });
  const op = callData === args.op.callData ? args.op : { ...args.op, callData };
  return args.ep.preVerificationGas({ op, fields: args.fields, l1: args.l1 });
}

/** The gas bounds of one op: `needed` from preVerificationGasNeeded, the postOp limit its paymaster fields carry. */
export function opGasBounds(args: {
  readonly ep: EntryPointModule;
  readonly bounds: SigningBounds;
  readonly preVerificationGasNeeded: bigint;
  readonly paymasterPostOpGasLimit: bigint;
}): OpGasBounds {
  const { ep, bounds } = args;
  const postOp = args.paymasterPostOpGasLimit;
  return {
    bounds,
    preVerificationGasNeeded: args.preVerificationGasNeeded,
    maxPreVerificationGasForSize:
      (args.preVerificationGasNeeded * bounds.preVerificationGasMultiplierPpm) / PPM + bounds.preVerificationGasSlack,
    maxVerificationGasLimit:
      ep.maxVerificationGasLimit === undefined
        ? bounds.maxVerificationGasLimit
        : min(bounds.maxVerificationGasLimit, ep.maxVerificationGasLimit),
    maxCallGasLimitForPenalty: ep.maxCallGasLimitForPenalty({
      penalty: bounds.maxUnusedGasPenalty,
      paymasterPostOpGasLimit: postOp,
    }),
    unusedGasPenalty: (callGasLimit) => ep.unusedGasPenalty({ callGasLimit, paymasterPostOpGasLimit: postOp }),
  };
}

function deny(rule: BoundsRule, value: bigint, bound: bigint, extra?: Record<string, string>): never {
  throw new BoundsExceededError({ rule, value, bound, unit: 'gas', ...(extra === undefined ? {} : { extra }) });
}

/** The caller's preVerificationGas, before anything is simulated for it: above the op's bound, refused. */
export function assertPreVerificationGas(gas: OpGasBounds, preVerificationGas: bigint | undefined): void {
  if (preVerificationGas === undefined) return;
  const { bounds } = gas;
  if (preVerificationGas > bounds.maxPreVerificationGas) {
    deny('preVerificationGas', preVerificationGas, bounds.maxPreVerificationGas);
  }
  if (preVerificationGas > gas.maxPreVerificationGasForSize) {
    deny('preVerificationGasForSize', preVerificationGas, gas.maxPreVerificationGasForSize, {
      needed: gas.preVerificationGasNeeded.toString(),
    });
  }
}

/** One set of gas values (an op's limits, or the caps it is signed with) against the op's bounds. */
function assertGas(gas: OpGasBounds, values: GasLimits): void {
  const { bounds } = gas;
  if (values.callGasLimit > bounds.maxCallGasLimit) deny('callGasLimit', values.callGasLimit, bounds.maxCallGasLimit);
  if (values.verificationGasLimit > gas.maxVerificationGasLimit) {
    deny('verificationGasLimit', values.verificationGasLimit, gas.maxVerificationGasLimit);
  }
  assertPreVerificationGas(gas, values.preVerificationGas);
  const penalty = gas.unusedGasPenalty(values.callGasLimit);
  if (penalty > bounds.maxUnusedGasPenalty) {
    deny('unusedGasPenalty', penalty, bounds.maxUnusedGasPenalty, { callGasLimit: values.callGasLimit.toString() });
  }
}

/**
 * The op's gas against its bounds: its limits (what the answer returns, so never limits the signature does not
 * cover), then the caps it is signed with if any, then the worst-case cost (at the caps) against `maxOpCostWei`.
 */
export function assertGasWithinBounds(args: {
  readonly gas: OpGasBounds;
  readonly limits: GasLimits;
  readonly caps?: GasLimits | undefined;
  readonly worstCaseWei: bigint;
}): void {
  assertGas(args.gas, args.limits);
  if (args.caps !== undefined) assertGas(args.gas, args.caps);
  const bound = args.gas.bounds.maxOpCostWei;
  if (args.worstCaseWei > bound) {
    throw new BoundsExceededError({ rule: 'maxOpCost', value: args.worstCaseWei, bound, unit: 'wei' });
  }
}

/**
 * The caps a v0.7+ signature binds when the client's bundler estimates the op's gas after it: headroom
 * over Patron's limits where the bundler's figures differ from Patron's, each shrunk to fit the op's bounds and never
 * below the limits (limits out of bounds are refused by assertGasWithinBounds first):
 * - verificationGasLimit and callGasLimit: twice the limit plus 50,000, within their caps, ERC-7562's limit and (the
 *   call) the penalty bound;
 * - preVerificationGas: the op's bound itself (needed × the multiplier + the slack), which the bundler's estimate
 *   over the same op fits in.
 */
export function gasCapsFor(limits: GasLimits, gas: OpGasBounds): GasLimits {
  const { bounds } = gas;
  const headroom = (v: bigint) => v * 2n + 50_000n;
  const call = min(headroom(limits.callGasLimit), bounds.maxCallGasLimit);
  const penaltyCall = gas.maxCallGasLimitForPenalty;
  const max = (a: bigint, b: bigint) => (a > b ? a : b);
  return {
    verificationGasLimit: max(
      limits.verificationGasLimit,
      min(headroom(limits.verificationGasLimit), gas.maxVerificationGasLimit),
    ),
    callGasLimit: max(limits.callGasLimit, penaltyCall === undefined ? call : min(call, penaltyCall)),
    preVerificationGas: max(
      limits.preVerificationGas,
      min(gas.maxPreVerificationGasForSize, bounds.maxPreVerificationGas),
    ),
  };
}
