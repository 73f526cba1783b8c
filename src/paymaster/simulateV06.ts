import { type Address, decodeErrorResult, encodeFunctionData, type Hex, zeroAddress } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import type { ChainRuntime } from '../chain/chainRegistry.js';
import { SimulationFailedError, UnavailableError } from '../errors/PatronError.js';
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
}): Promise<ExecutionResultV06> {
  const data = encodeFunctionData({
    abi: entryPoint06Abi,
    functionName: 'simulateHandleOp',
    args: [args.userOp, args.target ?? zeroAddress, args.targetCallData ?? '0x'],
  });
  let revertData: Hex | undefined;
  try {
    await args.chain.request({ method: 'eth_call', params: [{ to: args.chain.entryPoint, data }, 'latest'] });
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

/** The revert data inside a JSON-RPC error, wherever the node put it (`data`, `data.data`, a cause's). */
export function findRevertData(err: unknown): Hex | undefined {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    const data = (current as { data?: unknown }).data;
    if (typeof data === 'string' && /^0x[0-9a-fA-F]*$/.test(data) && data.length >= 10) return data as Hex;
    if (typeof data === 'object' && data !== null) {
      const inner = (data as { data?: unknown }).data;
      if (typeof inner === 'string' && /^0x[0-9a-fA-F]*$/.test(inner) && inner.length >= 10) return inner as Hex;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

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
