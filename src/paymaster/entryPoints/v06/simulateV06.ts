import { type Address, decodeErrorResult, encodeFunctionData, type Hex, zeroAddress } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import type { ChainRuntime } from '../../../chain/chainRegistry.js';
import { findRevertData } from '../../../chain/revertData.js';
import { SimulationFailedError, UnavailableError } from '../../../errors/PatronError.js';
import type { UserOperationV06 } from './patronPaymasterV06.js';

/**
 * EntryPoint v0.6 `simulateHandleOp` through `eth_call`. It always reverts: with `ExecutionResult` when the op
 * would go through, with `FailedOp(index, "AAxx …")` when validation fails. `target`/`targetCallData` run
 * after the op, from the EntryPoint, and report their own success and return data.
 */
export interface ExecutionResultV06 {
  readonly preOpGas: bigint;
  readonly paid: bigint;
  readonly targetSuccess: boolean;
  readonly targetResult: Hex;
}

export async function simulateHandleOpV06(args: {
  chain: ChainRuntime;
  userOp: UserOperationV06;
  target?: Address;
  targetCallData?: Hex;
  /** Storage the simulation sees changed (eth_call's state override set); none: a plain eth_call. */
  stateDiff?: Readonly<Record<Address, Readonly<Record<Hex, Hex>>>> | undefined;
}): Promise<ExecutionResultV06> {
  const data = encodeFunctionData({
    abi: entryPoint06Abi,
    functionName: 'simulateHandleOp',
    args: [args.userOp, args.target ?? zeroAddress, args.targetCallData ?? '0x'],
  });
  let revertData: Hex | undefined;
  try {
    const call = { to: args.chain.entryPoint, data };
    // Without a state diff the call stays a two-parameter eth_call, which every node takes.
    const overrides =
      args.stateDiff === undefined
        ? undefined
        : Object.fromEntries(Object.entries(args.stateDiff).map(([address, diff]) => [address, { stateDiff: diff }]));
    await args.chain.request({
      method: 'eth_call',
      params: overrides === undefined ? [call, 'latest'] : [call, 'latest', overrides],
    });
  } catch (err) {
    revertData = findRevertData(err);
    if (revertData === undefined) {
      throw new UnavailableError('The chain could not simulate the user operation', { cause: err });
    }
  }
  if (revertData === undefined)
    throw new UnavailableError('simulateHandleOp returned instead of reverting: is this an EntryPoint v0.6?');
  let decoded: ReturnType<typeof decodeErrorResult<typeof entryPoint06Abi>>;
  try {
    decoded = decodeErrorResult({ abi: entryPoint06Abi, data: revertData });
  } catch (err) {
    throw new SimulationFailedError('Simulation failed: the EntryPoint reverted with an unknown error', revertData, {
      cause: err,
    });
  }
  if (decoded.errorName === 'ExecutionResult') {
    const [preOpGas, paid, , , targetSuccess, targetResult] = decoded.args;
    return { preOpGas, paid, targetSuccess, targetResult };
  }
  if (decoded.errorName === 'FailedOp') {
    const reason = decoded.args[1];
    throw new SimulationFailedError(`Simulation failed: ${reason}`, reason);
  }
  throw new SimulationFailedError(`Simulation failed: ${decoded.errorName}`, decoded.errorName);
}

/** Moved to chain/revertData.ts (the chain reads use it too); re-exported for simulateV07.ts. */
export { findRevertData };

/** A readable reason from a call's revert data: Error(string), Panic(uint256), or the raw selector. */
export function describeRevert(data: Hex): string {
  if (data === '0x') return 'reverted without a reason';
  try {
    const d = decodeErrorResult({ abi: [], data });
    if (d.errorName === 'Error') return String(d.args?.[0] ?? '');
    if (d.errorName === 'Panic') return `panic ${String(d.args?.[0] ?? '')}`;
  } catch {
    // not a standard error: fall through to the raw data
  }
  return `reverted with ${data.length > 74 ? `${data.slice(0, 74)}…` : data}`;
}
