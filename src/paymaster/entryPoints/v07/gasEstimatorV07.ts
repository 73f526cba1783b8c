import { type Address, encodeFunctionData, type Hex, parseAbi, slice } from 'viem';
import { getUserOperationHash } from 'viem/account-abstraction';
import type { Eip1193Request } from '../../../chain/chainRegistry.js';
import type { EntryPointV07Version } from '../../../chain/entryPoints.js';
import { SimulationFailedError } from '../../../errors/PatronError.js';
import { maxBig } from '../../maxBig.js';
import { DUMMY_SIGNATURE } from '../v06/gasEstimatorV06.js';
import { preVerificationGasV07 } from './preVerificationGasV07.js';
import { describeInnerRevert, simulateHandleOpV07, simulationFailureAbi } from './simulateV07.js';
import { packUserOperationV07, type UnpackedUserOperationV07 } from './userOperationV07.js';

/**
 * Gas limits for an EntryPoint v0.7-v0.9 op, by simulation (EntryPointSimulations.simulateHandleOp at a gas
 * price of 1 wei, so `paid` is gas). The caller gives the op with its paymaster, that paymaster's
 * verification/postOp limits and a paymasterData of the final length (or no paymaster). Margins as v0.6:
 * - preVerificationGas: preVerificationGasV07 (calldata + 5 %, never below alto's rule, + 25,000 for an
 *   EIP-7702 authorization), never below the caller's;
 * - verificationGasLimit: 1.3 × the validation gas + 10,000. simulateHandleOp reports the account's and the
 *   paymaster's validation as one number, so this covers both (generous by the paymaster's part, which no
 *   penalty applies to);
 * - callGasLimit: 1.2 × the call's gas + 10,000.
 *
 * The unused-gas penalty makes `paid` more than the gas used: v0.7 adds 10 % of the unused
 * callGasLimit + paymasterPostOpGasLimit; v0.8/v0.9 10 % of the unused callGasLimit, and separately of the
 * unused postOp limit, each only when at least 40,000 is unused. So three simulations run side by side:
 * - the op as it is, with a large callGasLimit;
 * - a probe: the same with its callData emptied, which runs the account's callData as the simulation's
 *   `target` instead (only the target's success and revert data are reported, which names a reverting call);
 *   the call is the only difference between the two, penalty included, so its gas is solved for exactly
 *   (callGasUsed);
 * - the emptied op with callGasLimit 0, which has no execution penalty: what the op costs besides its call
 *   (the EntryPoint's overhead, postOp and the postOp's own penalty), for `gasUsed`.
 */
export interface GasEstimateV07 {
  readonly callGasLimit: bigint;
  readonly verificationGasLimit: bigint;
  readonly preVerificationGas: bigint;
  /**
   * What the EntryPoint would charge in gas if the call used exactly its measured gas: validation,
   * preVerificationGas, the call, postOp, and only the postOp's own penalty.
   */
  readonly gasUsed: bigint;
  /** The `after` call's outcome. */
  readonly after?: { readonly success: boolean; readonly result: Hex };
}

export interface EstimateGasV07Args {
  readonly request: Eip1193Request;
  readonly entryPoint: Address;
  readonly version: EntryPointV07Version;
  readonly userOp: UnpackedUserOperationV07;
  /** The caller's preVerificationGas, if any: the result is never lower. */
  readonly callerPreVerificationGas?: bigint | undefined;
  /** The paymasterData to simulate with, made from the simulated op (e.g. signed for real so postOp runs). */
  readonly simulationPaymasterData?: ((simulated: UnpackedUserOperationV07) => Hex) | undefined;
  /** A call made from the EntryPoint after the op, whose result is reported (e.g. a view of the paymaster). */
  readonly after?: { readonly target: Address; readonly callData: Hex } | undefined;
}

/** Limits for the simulation itself: generous, and cheap at 1 wei. */
const SIM_VERIFICATION_GAS = 3_000_000n;
const SIM_CALL_GAS = 10_000_000n;
/** v0.8+: no penalty when less than this is unused. */
const PENALTY_THRESHOLD = 40_000n;

const EXECUTE_USER_OP_SELECTOR: Hex = '0x8dd7712f';
const executeUserOpAbi = parseAbi([
  'struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }',
  'function executeUserOp(PackedUserOperation userOp, bytes32 userOpHash)',
]);

export async function estimateGasV07(args: EstimateGasV07Args): Promise<GasEstimateV07> {
  // The op's own (dummy) signature when it has one: its account knows the format and the final length, and
  // preVerificationGas is paid per byte. Only an empty one gets the 65-byte ECDSA dummy.
  const signature = args.userOp.signature === '0x' ? DUMMY_SIGNATURE : args.userOp.signature;
  const base: UnpackedUserOperationV07 = { ...args.userOp, signature };
  const preVerificationGas = maxBig(preVerificationGasV07(base), args.callerPreVerificationGas ?? 0n);
  const unsigned: UnpackedUserOperationV07 = {
    ...base,
    preVerificationGas,
    verificationGasLimit: SIM_VERIFICATION_GAS,
    callGasLimit: SIM_CALL_GAS,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
  };
  const stub: UnpackedUserOperationV07 =
    args.simulationPaymasterData === undefined
      ? unsigned
      : { ...unsigned, paymasterData: args.simulationPaymasterData(unsigned) };
  const common = {
    request: args.request,
    entryPoint: args.entryPoint,
    version: args.version,
    ignoreSignatureFailure: true,
  };
  const target = stub.callData === '0x' ? {} : { target: stub.sender, targetCallData: await probeCallData(args, stub) };
  const withoutCall = (callData: Hex) => {
    const emptied: UnpackedUserOperationV07 = { ...stub, callData };
    return Promise.all([
      simulateHandleOpV07({ ...common, userOp: emptied, ...target }),
      simulateHandleOpV07({ ...common, userOp: { ...emptied, callGasLimit: 0n } }),
    ]);
  };
  const measuring = simulateHandleOpV07({
    ...common,
    userOp: stub,
    ...(args.after === undefined ? {} : { target: args.after.target, targetCallData: args.after.callData }),
  });
  measuring.catch(() => undefined);
  const [probe, bare] = await withoutCall('0x').catch((err: unknown) => {
    // An account whose validation reads its callData's selector refuses an empty one (Safe's 4337 module:
    // UnsupportedExecutionFunction, AA23): its selector alone validates, and the call then reverts at once (a few
    // hundred gas the probe counts, which the call's margin covers).
    if (!(err instanceof SimulationFailedError) || !err.reason.startsWith('AA23') || stub.callData.length < 10) {
      throw err;
    }
    return withoutCall(slice(stub.callData, 0, 4));
  });
  const measured = await measuring;
  if (stub.callData !== '0x' && !probe.targetSuccess) {
    const reason = `execution reverted: ${describeInnerRevert(simulationFailureAbi(args.version), probe.targetResult)}`;
    throw new SimulationFailedError(`Simulation failed: the account's call ${reason}`, reason);
  }
  const afterValidation = (r: { paid: bigint; preOpGas: bigint }) => r.paid - r.preOpGas;
  const callGas = stub.callData === '0x' ? 0n : callGasUsed(afterValidation(measured) - afterValidation(probe));
  const verificationUsed = measured.preOpGas - preVerificationGas;
  return {
    preVerificationGas,
    verificationGasLimit: ceilDiv(verificationUsed * 13n, 10n) + 10_000n,
    callGasLimit: ceilDiv(callGas * 12n, 10n) + 10_000n,
    gasUsed: measured.preOpGas + callGas + afterValidation(bare),
    ...(args.after === undefined ? {} : { after: { success: measured.targetSuccess, result: measured.targetResult } }),
  };
}

/**
 * The call's own gas from `difference`, the measured op's gas after validation minus the probe's. Both ran
 * with callGasLimit SIM_CALL_GAS, so both were penalised 10 % of their unused limit (v0.7: of
 * callGasLimit + postOpLimit; v0.8+: of callGasLimit, the postOp's own penalty being the same in both), and
 * everything but the call is the same in both: difference = call − call / 10, so call = 10·difference / 9,
 * rounded up (at most 3 gas over). Were the call so large that less than 40,000 of SIM_CALL_GAS stayed
 * unused, no penalty applied and the difference is the gas.
 */
export function callGasUsed(difference: bigint): bigint {
  if (difference < 0n) return 0n;
  // +1: both penalties are floored, which can take one gas off the difference.
  const call = ceilDiv(10n * (difference + 1n), 9n);
  return call + PENALTY_THRESHOLD >= SIM_CALL_GAS ? difference : call;
}

/**
 * What the probe runs as its target: the account's callData, which the EntryPoint would send as is, except
 * for an account that takes `executeUserOp(op, userOpHash)` (the EntryPoint then calls that with the whole op).
 */
async function probeCallData(args: EstimateGasV07Args, op: UnpackedUserOperationV07): Promise<Hex> {
  if (op.callData.length < 10 || slice(op.callData, 0, 4) !== EXECUTE_USER_OP_SELECTOR) return op.callData;
  const chainId = Number(await args.request({ method: 'eth_chainId' }));
  const packed = packUserOperationV07(op);
  const userOpHash = getUserOperationHash({
    chainId,
    entryPointAddress: args.entryPoint,
    entryPointVersion: args.version,
    userOperation: { ...op, factory: op.factory as Address | undefined },
  });
  return encodeFunctionData({ abi: executeUserOpAbi, functionName: 'executeUserOp', args: [packed, userOpHash] });
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
