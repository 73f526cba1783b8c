import {
  type Abi,
  type Address,
  concat,
  decodeErrorResult,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
  hexToBigInt,
  parseAbi,
  zeroAddress,
} from 'viem';
import { loadAccountAbstractionArtifact } from '../../../chain/aaArtifacts.js';
import type { ContractArtifact } from '../../../chain/artifacts.js';
import type { Eip1193Request } from '../../../chain/chainRegistry.js';
import { patronPaymasterV07Abi } from '../../../chain/deployPatronPaymasterV07.js';
import type { EntryPointV07Version } from '../../../chain/entryPoints.js';
import { SimulationFailedError, UnavailableError } from '../../../errors/PatronError.js';
import { describeRevert, findRevertData } from '../v06/simulateV06.js';
import { packUserOperationV07, type UnpackedUserOperationV07 } from './userOperationV07.js';
import { type BlockContext, hasWindow, parseValidationData, validationFailure } from './validationDataV07.js';

/**
 * EntryPoint v0.7-v0.9 `simulateHandleOp`. The deployed EntryPoints have no simulation methods; bundlers run
 * eth-infinitism's EntryPointSimulations (the EntryPoint plus the simulate* functions) *at the EntryPoint's
 * address* through an eth_call state override, so storage (deposits, nonces, deployed accounts) is the
 * EntryPoint's own. Unlike v0.6 it returns its ExecutionResult, and reverts only on a failure, which is named
 * here: FailedOp / FailedOpWithRevert (with the inner revert decoded), v0.9's custom errors, anything else by
 * its selector. It does not check the validation data it returns (handleOps does), so that check is made here
 * too: a signature failure or a window that excludes the next block is a failure, as it would be on chain.
 */
export interface ExecutionResultV07 {
  readonly preOpGas: bigint;
  readonly paid: bigint;
  readonly accountValidationData: bigint;
  readonly paymasterValidationData: bigint;
  readonly targetSuccess: boolean;
  readonly targetResult: Hex;
}

export interface SimulateHandleOpV07Args {
  /** EIP-1193 access to the chain (the node must accept eth_call state overrides, as geth, EDR and anvil do). */
  readonly request: Eip1193Request;
  readonly entryPoint: Address;
  readonly version: EntryPointV07Version;
  readonly userOp: UnpackedUserOperationV07;
  /** Called from the EntryPoint after the op; its success and return data are reported. */
  readonly target?: Address | undefined;
  readonly targetCallData?: Hex | undefined;
  /** For estimation with dummy signatures, which fail by design; windows are still checked. */
  readonly ignoreSignatureFailure?: boolean | undefined;
  /** Storage the simulation sees changed, per contract (slot → value). */
  readonly stateDiff?: Readonly<Record<Address, Readonly<Record<Hex, Hex>>>> | undefined;
}

/**
 * simulateHandleOp as written in every version's EntryPointSimulations, typed so viem infers the result; the
 * tests check that its selector is the artifacts'. Errors are decoded with the version's artifact ABI.
 */
export const simulateHandleOpAbi = parseAbi([
  'struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }',
  'struct ExecutionResult { uint256 preOpGas; uint256 paid; uint256 accountValidationData; uint256 paymasterValidationData; bool targetSuccess; bytes targetResult; }',
  'function simulateHandleOp(PackedUserOperation op, address target, bytes targetCallData) returns (ExecutionResult)',
]);

const simulationsArtifacts = new Map<EntryPointV07Version, ContractArtifact>();

/** The version's EntryPointSimulations, read once per process (a 20+ KB file parsed on every call would show). */
export function entryPointSimulations(version: EntryPointV07Version): ContractArtifact {
  let artifact = simulationsArtifacts.get(version);
  if (artifact === undefined) {
    artifact = loadAccountAbstractionArtifact(version, 'EntryPointSimulations');
    simulationsArtifacts.set(version, artifact);
  }
  return artifact;
}

const failureAbis = new Map<EntryPointV07Version, Abi>();

/**
 * What a simulation's revert is decoded with: the version's EntryPointSimulations, plus the errors of Patron's own
 * paymaster, so that its AA33 reasons are named (TokenAllowanceTooLow(…), TokenPermitFailed(…)) rather than told
 * by their selector.
 */
export function simulationFailureAbi(version: EntryPointV07Version): Abi {
  let abi = failureAbis.get(version);
  if (abi === undefined) {
    abi = [...entryPointSimulations(version).abi, ...patronPaymasterV07Abi.filter((x) => x.type === 'error')];
    failureAbis.set(version, abi);
  }
  return abi;
}

/** The delegation designator EIP-7702 writes as the sender's code: `0xef0100 ‖ delegate`. */
const delegationCode = (delegate: Address): Hex => concat(['0xef0100', delegate]);

export async function simulateHandleOpV07(args: SimulateHandleOpV07Args): Promise<ExecutionResultV07> {
  const { deployedBytecode } = entryPointSimulations(args.version);
  const data = encodeFunctionData({
    abi: simulateHandleOpAbi,
    functionName: 'simulateHandleOp',
    args: [packUserOperationV07(args.userOp), args.target ?? zeroAddress, args.targetCallData ?? '0x'],
  });
  const overrides: Record<string, { code?: Hex; stateDiff?: Readonly<Record<Hex, Hex>> }> = {
    [args.entryPoint]: { code: deployedBytecode },
  };
  for (const [address, diff] of Object.entries(args.stateDiff ?? {})) {
    overrides[address] = { ...overrides[address], stateDiff: diff };
  }
  // An EIP-7702 op is simulated before its authorization is on chain: the bundler's type-4 transaction
  // installs it. The override gives the sender the code it will have, so the EntryPoint's 7702 checks pass.
  if (args.userOp.eip7702Auth !== undefined) {
    overrides[args.userOp.sender] = {
      ...overrides[args.userOp.sender],
      code: delegationCode(args.userOp.eip7702Auth.address),
    };
  }
  let returned: unknown;
  try {
    returned = await args.request({ method: 'eth_call', params: [{ to: args.entryPoint, data }, 'latest', overrides] });
  } catch (err) {
    const revertData = findRevertData(err);
    if (revertData !== undefined) throw simulationFailure(simulationFailureAbi(args.version), revertData);
    if (isBareRevert(err)) {
      throw new SimulationFailedError(
        'Simulation failed: the EntryPoint reverted without data',
        'reverted without data',
      );
    }
    throw new UnavailableError('The chain could not simulate the user operation', { cause: err });
  }
  if (typeof returned !== 'string' || !returned.startsWith('0x')) {
    throw new UnavailableError(`eth_call returned ${typeof returned} instead of hex data`);
  }
  const result = decodeExecutionResult(returned as Hex);
  await assertValidationData(args, result);
  return result;
}

function decodeExecutionResult(returned: Hex): ExecutionResultV07 {
  try {
    return decodeFunctionResult({ abi: simulateHandleOpAbi, functionName: 'simulateHandleOp', data: returned });
  } catch (err) {
    // A node that ignores state overrides runs the real EntryPoint, which has no simulateHandleOp.
    throw new UnavailableError('simulateHandleOp returned no ExecutionResult: does the node apply state overrides?', {
      cause: err,
    });
  }
}

async function assertValidationData(args: SimulateHandleOpV07Args, result: ExecutionResultV07): Promise<void> {
  const account = parseValidationData(result.accountValidationData);
  const paymaster = parseValidationData(result.paymasterValidationData);
  // The block is fetched only when there is a window to judge; most ops carry none.
  const block =
    hasWindow(account) || hasWindow(paymaster) ? await nextBlock(args.request) : { timestamp: 0n, number: 0n };
  const reason = validationFailure({
    version: args.version,
    account,
    paymaster,
    block,
    ignoreSignatureFailure: args.ignoreSignatureFailure === true,
  });
  if (reason !== undefined) throw new SimulationFailedError(`Simulation failed: ${reason}`, reason);
}

/** The latest block's timestamp, and the number of the block the op could land in first. */
async function nextBlock(request: Eip1193Request): Promise<BlockContext> {
  let block: unknown;
  try {
    block = await request({ method: 'eth_getBlockByNumber', params: ['latest', false] });
  } catch (err) {
    throw new UnavailableError('The chain could not return its latest block', { cause: err });
  }
  const { timestamp, number } = (block ?? {}) as { timestamp?: unknown; number?: unknown };
  if (typeof timestamp !== 'string' || typeof number !== 'string') {
    throw new UnavailableError('The latest block has no timestamp or number');
  }
  return { timestamp: hexToBigInt(timestamp as Hex), number: hexToBigInt(number as Hex) + 1n };
}

/** An RPC error that says "reverted" but carries no data (e.g. a bare `revert()`). */
function isBareRevert(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return code === 3 || (typeof message === 'string' && /revert/i.test(message));
}

/** The named failure for the EntryPoint's revert data. */
export function simulationFailure(abi: Abi, revertData: Hex): SimulationFailedError {
  let decoded: { errorName: string; args: readonly unknown[] | undefined };
  try {
    decoded = decodeErrorResult({ abi, data: revertData });
  } catch {
    const reason = `unknown error ${revertData.slice(0, 10)} (${describeRevert(revertData)})`;
    return new SimulationFailedError(`Simulation failed: the EntryPoint reverted with ${reason}`, reason);
  }
  const params = decoded.args ?? [];
  if (decoded.errorName === 'FailedOp') {
    const reason = String(params[1]);
    return new SimulationFailedError(`Simulation failed: ${reason}`, reason);
  }
  if (decoded.errorName === 'FailedOpWithRevert') {
    const reason = `${String(params[1])}: ${describeInnerRevert(abi, params[2] as Hex)}`;
    return new SimulationFailedError(`Simulation failed: ${reason}`, reason);
  }
  if (decoded.errorName === 'Error' || decoded.errorName === 'Panic') {
    const reason = describeRevert(revertData);
    return new SimulationFailedError(`Simulation failed: the EntryPoint reverted: ${reason}`, reason);
  }
  // v0.9 names several failures with custom errors instead of AAxx strings (InvalidPaymaster, …).
  const reason = formatError(abi, decoded.errorName, params);
  return new SimulationFailedError(`Simulation failed: ${reason}`, reason);
}

/** An account's or paymaster's own revert inside FailedOpWithRevert: Error/Panic, a known error, or its selector. */
export function describeInnerRevert(abi: Abi, inner: Hex): string {
  if (inner === '0x') return 'reverted without a reason';
  try {
    const d = decodeErrorResult({ abi, data: inner });
    if (d.errorName === 'Error' || d.errorName === 'Panic') return describeRevert(inner);
    return formatError(abi, d.errorName, d.args ?? []);
  } catch {
    // The selector first, so it can be looked up; the arguments after it, cut to a readable length.
    const args = inner.length > 10 ? ` with data 0x${inner.slice(10, 138)}${inner.length > 138 ? '…' : ''}` : '';
    return inner.length < 10 ? `reverted with ${inner}` : `reverted with unknown error ${inner.slice(0, 10)}${args}`;
  }
}

/** `Name(param=value, …)` with the parameter names of the ABI's error. */
function formatError(abi: Abi, name: string, values: readonly unknown[]): string {
  const item = abi.find((x) => x.type === 'error' && x.name === name);
  const inputs = item !== undefined && 'inputs' in item ? item.inputs : [];
  const parts = values.map((v, i) => `${inputs[i]?.name || `arg${i}`}=${String(v)}`);
  return `${name}(${parts.join(', ')})`;
}
