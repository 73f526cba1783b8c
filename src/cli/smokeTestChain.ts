import type { PublicClient } from 'viem';
import { type Address, encodeFunctionData } from 'viem';
import {
  entryPoint06Abi,
  entryPoint07Abi,
  entryPoint08Abi,
  toPackedUserOperation,
  type UserOperation,
} from 'viem/account-abstraction';
import { SIMPLE_ACCOUNT_ADDRESSES } from '../chain/accountFactories.js';
import { readPaymasterSigners } from '../chain/paymasterSigners.js';
import { findRevertData } from '../chain/revertData.js';
import { ValidationError } from '../errors/PatronError.js';
import { simulationFailure } from '../paymaster/entryPoints/v07/simulateV07.js';
import { type ChainFacts, explainFailure, type PatronDeployment, reasonOf } from './smokeTestChecks.js';

/** The EntryPoint versions whose SimpleAccount the smoke test builds (permissionless `toSimpleSmartAccount`). */
export type SmokeVersion = '0.6' | '0.7' | '0.8';

/**
 * The SimpleAccountFactory each version's SDKs use without configuration: eth-infinitism's, as permissionless
 * 0.4.1 `toSimpleSmartAccount` defaults to (v0.6: its getFactoryAddress; v0.7/v0.8: accountFactories.ts).
 */
export const CANONICAL_SIMPLE_ACCOUNT_FACTORY: Readonly<Record<SmokeVersion, Address>> = {
  '0.6': '0x9406Cc6185a346906296840746125a0E44976454',
  '0.7': SIMPLE_ACCOUNT_ADDRESSES.factoryV07,
  '0.8': SIMPLE_ACCOUNT_ADDRESSES.factoryV08,
};

/**
 * The node at --rpc is the chain Patron serves: its chain id, code at the EntryPoint, the paymaster and the factory,
 * the paymaster's deposit and verifying signer. A missing contract fails here, named; a low deposit or another
 * signer is reported and left to the simulation, whose EntryPoint reason (AA31, AA34) is then explained with them.
 */
export async function readChainFacts(args: {
  client: PublicClient;
  rpcUrl: string;
  chainId: number;
  deployment: PatronDeployment;
  factory: Address;
}): Promise<{ facts: ChainFacts; block: bigint }> {
  const { client, deployment: d } = args;
  let nodeChainId: number;
  try {
    nodeChainId = await client.getChainId();
  } catch (err) {
    throw new ValidationError(`the node at --rpc ${args.rpcUrl} is not reachable (${reasonOf(err)})`);
  }
  if (nodeChainId !== args.chainId) {
    throw new ValidationError(
      `wrong chain: the node at --rpc ${args.rpcUrl} is chain ${nodeChainId}, --chain is ${args.chainId}`,
    );
  }
  const missing = async (at: Address) => ((await client.getCode({ address: at })) ?? '0x') === '0x';
  if (await missing(d.entryPoint)) {
    throw new ValidationError(`no EntryPoint v${d.entryPointVersion} at ${d.entryPoint} on chain ${args.chainId}`);
  }
  if (await missing(d.paymaster)) {
    throw new ValidationError(
      `no contract at the paymaster ${d.paymaster} on chain ${args.chainId}: check PATRON_CHAINS and --rpc`,
    );
  }
  if (await missing(args.factory)) {
    throw new ValidationError(
      `no SimpleAccountFactory at ${args.factory} on chain ${args.chainId}: pass --factory with this chain's SimpleAccountFactory for EntryPoint v${d.entryPointVersion}`,
    );
  }
  const depositWei = await client.readContract({
    address: d.entryPoint,
    abi: entryPoint06Abi,
    functionName: 'balanceOf',
    args: [d.paymaster],
  });
  // Patron's paymasters (v0.6 and v0.7+) both expose their signers; another paymaster may not, which is no failure by
  // itself.
  const signers = await readPaymasterSigners({ client, paymaster: d.paymaster }).then(
    (s) => s.signers,
    () => undefined,
  );
  const block = await client.getBlockNumber();
  return { facts: { paymaster: d.paymaster, patronSigner: d.signer, signers, depositWei }, block };
}

/** The EntryPoint's largest charge for the op (its prefund): the gas limits × maxFeePerGas, per version. */
export function maxCostWei(op: UserOperation): bigint {
  if ('initCode' in op && op.initCode !== undefined) {
    // v0.6 with a paymaster: verificationGasLimit counts three times (validation and up to two postOp calls).
    return (op.callGasLimit + op.verificationGasLimit * 3n + op.preVerificationGas) * op.maxFeePerGas;
  }
  const pm =
    'paymasterVerificationGasLimit' in op
      ? (op.paymasterVerificationGasLimit ?? 0n) + (op.paymasterPostOpGasLimit ?? 0n)
      : 0n;
  return (op.callGasLimit + op.verificationGasLimit + pm + op.preVerificationGas) * op.maxFeePerGas;
}

/**
 * `eth_call` of `handleOps([op], beneficiary)` from a fresh address that holds nothing: the EntryPoint runs the
 * whole op (deployment, both validations with their signatures, the deposit check, execution, postOp) as a
 * bundler's transaction would, and nothing is sent. A revert is decoded (FailedOp "AAxx …") and explained.
 */
export async function simulateHandleOps(args: {
  client: PublicClient;
  version: SmokeVersion;
  entryPoint: Address;
  op: UserOperation;
  beneficiary: Address;
  facts: ChainFacts;
}): Promise<void> {
  const { version, op, beneficiary } = args;
  const abi = version === '0.6' ? entryPoint06Abi : version === '0.7' ? entryPoint07Abi : entryPoint08Abi;
  const data =
    version === '0.6'
      ? encodeFunctionData({
          abi: entryPoint06Abi,
          functionName: 'handleOps',
          args: [[asV06(op as UserOperation<'0.6'>)], beneficiary],
        })
      : encodeFunctionData({
          abi: entryPoint07Abi,
          functionName: 'handleOps',
          args: [[toPackedUserOperation(op as UserOperation<'0.7'>)], beneficiary],
        });
  try {
    await args.client.call({ account: beneficiary, to: args.entryPoint, data });
  } catch (err) {
    const revert = findRevertData(err);
    const reason =
      revert === undefined
        ? `eth_call of handleOps failed without revert data (${reasonOf(err)})`
        : simulationFailure(abi, revert).reason;
    throw new ValidationError(
      `the EntryPoint refused the op: ${explainFailure({ message: reason, facts: args.facts })}`,
    );
  }
}

/** The v0.6 op as the EntryPoint's ABI takes it (viem's type leaves initCode and paymasterAndData optional). */
function asV06(op: UserOperation<'0.6'>) {
  return { ...op, initCode: op.initCode ?? '0x', paymasterAndData: op.paymasterAndData ?? '0x' };
}
