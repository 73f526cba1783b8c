import { type Address, bytesToHex, type Hex, hexToBytes, stringToBytes } from 'viem';
import type { ChainRuntime } from '../../../chain/chainRegistry.js';
import { jsCryptoBackend } from '../../../crypto/cryptoBackend.js';
import { SimulationFailedError } from '../../../errors/PatronError.js';
import { maxBig } from '../../maxBig.js';
import {
  bytesField,
  type CalldataCount,
  calldataCost,
  dynamicFields,
  hexNonZero,
  hexSize,
  onesField,
  uintNonZero,
} from '../calldataCount.js';
import type { UserOperationV06 } from './patronPaymasterV06.js';
import { describeRevert, simulateHandleOpV06 } from './simulateV06.js';

/**
 * Gas limits for an EntryPoint v0.6 op, found by simulating it with a `paymasterAndData` of the final length
 * (the signature's offset is part of the op's encoding). Margins, documented in docs/reference/json-rpc.md ("Gas limits"):
 * - preVerificationGas: the calldata formula every v0.6 bundler uses (below) + 5 %, and never less than the
 *   caller's own value;
 * - verificationGasLimit: 1.3 × the validation gas used + 10,000 (the first op also deploys the account);
 * - callGasLimit: 1.2 × the execution gas used + 10,000 (the 63/64 rule and state changes between now and
 *   inclusion).
 * The simulation runs at a gas price of 1 wei, so the EntryPoint's `paid` is the gas used and the prefund it
 * checks against the paymaster's deposit is negligible.
 */
export interface GasLimitsV06 {
  readonly callGasLimit: bigint;
  readonly verificationGasLimit: bigint;
  readonly preVerificationGas: bigint;
}

/** Limits for the simulation itself: generous, and cheap at 1 wei. */
const SIM_VERIFICATION_GAS = 3_000_000n;
const SIM_CALL_GAS = 10_000_000n;

/**
 * A well-formed 65-byte ECDSA signature (low s, v 27/28) made by a throwaway key over a fixed digest:
 * accounts built on OpenZeppelin 4's ECDSA revert on malformed signatures instead of failing softly, which
 * would abort the simulation. Its content is irrelevant; its form and length are not.
 */
export const DUMMY_SIGNATURE: Hex = bytesToHex(
  jsCryptoBackend.signDigest(
    jsCryptoBackend.keccak256(stringToBytes('patron dummy digest')),
    jsCryptoBackend.keccak256(stringToBytes('patron dummy key')),
  ),
);

export interface EstimateGasV06Args {
  chain: ChainRuntime;
  userOp: UserOperationV06;
  /** The caller's preVerificationGas, if any: the result is never lower. */
  callerPreVerificationGas?: bigint;
  /**
   * The paymasterAndData to simulate with, made from the simulated op (the token mode signs it for real, so
   * the paymaster's whole validation and postOp run); default: the op's own, whose signature may be a dummy.
   */
  simulationPaymasterAndData?: (simulated: UserOperationV06) => Hex | Promise<Hex>;
  /** A call made from the EntryPoint after the op, whose result is reported (e.g. a view of the paymaster). */
  after?: { target: Address; callData: Hex };
  /** Storage both simulations see changed (eth_call state override), e.g. the token mode's simulation signer. */
  stateDiff?: Readonly<Record<Address, Readonly<Record<Hex, Hex>>>> | undefined;
}

export interface GasEstimateV06 extends GasLimitsV06 {
  /** Gas the simulated op used in all (what the EntryPoint charged at 1 wei). */
  readonly gasUsed: bigint;
  /** The `after` call's outcome. */
  readonly after?: { readonly success: boolean; readonly result: Hex };
}

/** DUMMY_SIGNATURE as bytes, for the stubs' encoders. */
export const DUMMY_SIGNATURE_BYTES: Uint8Array = hexToBytes(DUMMY_SIGNATURE);

export async function estimateGasV06(args: EstimateGasV06Args): Promise<GasEstimateV06> {
  // The op's own (dummy) signature as the client sent it: its account knows its format and the final length
  // (Biconomy Smart Account v2: abi.encode(signature, validationModule), 192 bytes), and preVerificationGas is
  // paid per calldata byte. Only an empty one gets the 65-byte ECDSA dummy.
  const signature = args.userOp.signature === '0x' ? DUMMY_SIGNATURE : args.userOp.signature;
  const base: UserOperationV06 = { ...args.userOp, signature };
  const preVerificationGas = maxBig(preVerificationGasV06(base), args.callerPreVerificationGas ?? 0n);
  const unsigned: UserOperationV06 = {
    ...base,
    preVerificationGas,
    verificationGasLimit: SIM_VERIFICATION_GAS,
    callGasLimit: SIM_CALL_GAS,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
  };
  const stub: UserOperationV06 =
    args.simulationPaymasterAndData === undefined
      ? unsigned
      : { ...unsigned, paymasterAndData: await args.simulationPaymasterAndData(unsigned) };
  // Two simulations in parallel: one measures gas; one runs the account's call data as the `target` (with
  // the op's own call data emptied), because only the target's success and revert data are reported.
  const [measured, probe] = await Promise.all([
    simulateHandleOpV06({
      chain: args.chain,
      userOp: stub,
      stateDiff: args.stateDiff,
      ...(args.after === undefined ? {} : { target: args.after.target, targetCallData: args.after.callData }),
    }),
    stub.callData === '0x'
      ? undefined
      : simulateHandleOpV06({
          chain: args.chain,
          userOp: { ...stub, callData: '0x' },
          stateDiff: args.stateDiff,
          target: stub.sender,
          targetCallData: stub.callData,
        }),
  ]);
  if (probe !== undefined && !probe.targetSuccess) {
    const reason = `execution reverted: ${describeRevert(probe.targetResult)}`;
    throw new SimulationFailedError(`Simulation failed: the account's call ${reason}`, reason);
  }
  const verificationUsed = measured.preOpGas - preVerificationGas;
  const executionUsed = measured.paid - measured.preOpGas;
  return {
    preVerificationGas,
    verificationGasLimit: (verificationUsed * 13n + 9n) / 10n + 10_000n,
    callGasLimit: (executionUsed * 12n + 9n) / 10n + 10_000n,
    gasUsed: measured.paid,
    ...(args.after === undefined ? {} : { after: { success: measured.targetSuccess, result: measured.targetResult } }),
  };
}

/**
 * preVerificationGas for an op as it will be sent (its paymasterAndData at the final length): the calldata formula +
 * 5 %, never below what alto demands of it (a bundler refuses an op below its own figure), as on v0.7.
 */
export function preVerificationGasV06(op: UserOperationV06): bigint {
  // Both rules count the same sender, nonce, initCode and callData: counted once (this runs on every request).
  const shared = sharedCountsV06(op);
  const own = (ownGasV06(ownCountV06(op, shared)) * 105n + 99n) / 100n;
  const alto = altoGasV06(op, shared);
  return own > alto ? own : alto;
}

/** What the two rules count alike: sender and nonce (non-zero bytes), initCode and callData. */
interface SharedCountsV06 {
  readonly head: number;
  readonly initCode: CalldataCount;
  readonly callData: CalldataCount;
}

const sharedCountsV06 = (op: UserOperationV06): SharedCountsV06 => ({
  head: hexNonZero(op.sender) + uintNonZero(op.nonce),
  initCode: bytesField(op.initCode),
  callData: bytesField(op.callData),
});

/**
 * alto 0.0.20's required preVerificationGas for a v0.6 op on a chain without EIP-7623 pricing or an L2 fee, its v0.7
 * rule (preVerificationGasV07.ts altoPreVerificationGas) over v0.6's tuple: 4 gas per calldata token (a zero byte
 * one token, any other four) of the op's encoding with its leading offset word, the gas fields at their largest
 * (uint128, preVerificationGas uint256) and paymasterAndData and the signature as 0xff; plus 21,000 + 9,830 + 7,260
 * and 9.2 gas per 32-byte word of callData. On v0.6 alto makes those 0xff fields as many bytes as their hex strings
 * have characters (`new Uint8Array(userOp.signature.length)`, where v0.7 takes `size()`): a 65-byte signature is
 * priced as 132 bytes of 0xff, and so it demands, so Patron follows it (test/e2e.policies.test.ts, through alto;
 * test/e2e.sdkV06.alto.test.ts holds alto's real estimates to this rule × 1.1).
 */
export function altoPreVerificationGasV06(op: UserOperationV06): bigint {
  return altoGasV06(op, sharedCountsV06(op));
}

function altoGasV06(op: UserOperationV06, shared: SharedCountsV06): bigint {
  // sender, nonce, two uint128 gas limits, preVerificationGas as uint256, two uint128 fees
  const head = shared.head + 16 + 16 + 32 + 16 + 16;
  const tail = dynamicFields(11, [
    shared.initCode,
    shared.callData,
    onesField(op.paymasterAndData.length),
    onesField(op.signature.length),
  ]);
  // The leading offset word (0x20) of the encoded tuple, then its 7 static words and the dynamic fields.
  const count = { bytes: 32 + 7 * 32 + tail.bytes, nonZero: 1 + head + tail.nonZero };
  const callDataWords = BigInt(Math.ceil(hexSize(op.callData) / 32));
  const perOp =
    op.callData.slice(0, 10).toLowerCase() === EXECUTE_USER_OP_SELECTOR
      ? 7_260n + 1_610n + (8_200n * BigInt(count.bytes / 32)) / 1000n
      : 7_260n + (callDataWords * 9_200n) / 1000n;
  return calldataCost(count) + 21_000n + 9_830n + perOp;
}

/** executeUserOp's selector: alto prices such a call by the words of the whole op (on every version). */
const EXECUTE_USER_OP_SELECTOR = '0x8dd7712f';

/**
 * The v0.6 reference formula (eth-infinitism bundler `calcPreVerificationGas`): 21,000 per bundle (one op),
 * 18,300 per op, 4 per 32-byte word of the packed op, and its calldata bytes at 4 (zero) / 16 (non-zero).
 * Gas fields are counted at a placeholder's size (0xffffff, three non-zero bytes) so the count does not depend on
 * them. The op's tuple is counted, not encoded (calldataCount.ts): 11 head words (sender, nonce, the initCode and
 * callData offsets, the five gas words, the paymasterAndData and signature offsets), then the four `bytes` fields.
 */
export function calldataGasV06(op: UserOperationV06): bigint {
  return ownGasV06(calldataCountV06(op));
}

const ownGasV06 = (count: CalldataCount): bigint =>
  calldataCost(count) + 21_000n + 18_300n + 4n * BigInt(count.bytes / 32);

/** The op's tuple as handleOps carries it, counted (calldataGasV06). */
export function calldataCountV06(op: UserOperationV06): CalldataCount {
  return ownCountV06(op, sharedCountsV06(op));
}

function ownCountV06(op: UserOperationV06, shared: SharedCountsV06): CalldataCount {
  const PLACEHOLDER_GAS_NON_ZERO = 3;
  const head =
    shared.head + 3 * PLACEHOLDER_GAS_NON_ZERO + uintNonZero(op.maxFeePerGas) + uintNonZero(op.maxPriorityFeePerGas);
  const tail = dynamicFields(11, [
    shared.initCode,
    shared.callData,
    bytesField(op.paymasterAndData),
    bytesField(op.signature),
  ]);
  return { bytes: 7 * 32 + tail.bytes, nonZero: head + tail.nonZero };
}
