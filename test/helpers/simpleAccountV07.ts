import assert from 'node:assert/strict';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import {
  type Address,
  createPublicClient,
  custom,
  type Hex,
  type PublicClient,
  parseEther,
  parseEventLogs,
} from 'viem';
import { entryPoint07Abi, entryPoint08Abi, type SmartAccount, type UserOperation } from 'viem/account-abstraction';
import type { LocalAccount } from 'viem/accounts';
import { waitForSuccess } from '../../src/chain/devClient.js';
import type { DevChain } from '../../src/chain/embeddedChain.js';
import {
  packUserOperationV07,
  type UnpackedUserOperationV07,
} from '../../src/paymaster/entryPoints/v07/userOperationV07.js';

/** Helpers for v0.7/v0.8 SimpleAccount ops on the dev chain, built with permissionless as a wallet would. */

export type SimpleVersion = '0.7' | '0.8';

/** A plain public client of the dev chain, as the SDKs get (permissionless types its client without an account). */
export function sdkClientOf(dev: DevChain): PublicClient {
  return createPublicClient({ chain: dev.client.chain, transport: custom(dev.chain, { retryCount: 0 }) });
}

export async function simpleAccount(
  dev: DevChain,
  owner: LocalAccount,
  version: SimpleVersion,
  index: bigint,
): Promise<SmartAccount> {
  return toSimpleSmartAccount({
    client: sdkClientOf(dev),
    owner,
    index,
    entryPoint: { address: dev.entryPoints[version], version },
  });
}

/** An op with no gas decided yet: the account's stub signature, its factory while undeployed, 3 gwei / 1 gwei. */
export async function draftOp(
  account: SmartAccount,
  calls: readonly { to: Address; value?: bigint; data?: Hex }[],
): Promise<UnpackedUserOperationV07> {
  const { factory, factoryData } = await account.getFactoryArgs();
  return {
    sender: account.address,
    nonce: await account.getNonce(),
    ...(factory === undefined ? {} : { factory, factoryData }),
    callData: await account.encodeCalls(calls.map((c) => ({ to: c.to, value: c.value ?? 0n, data: c.data ?? '0x' }))),
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    signature: await account.getStubSignature(),
  };
}

/** viem's shape of the same op, for the account's signer and viem's hash. */
export function toViemOperation(op: UnpackedUserOperationV07): UserOperation<'0.7'> {
  const { eip7702Auth: _auth, factory, ...rest } = op;
  return { ...rest, ...(factory === undefined ? {} : { factory: factory as Address }) };
}

export async function sign(account: SmartAccount, op: UnpackedUserOperationV07): Promise<UnpackedUserOperationV07> {
  return { ...op, signature: await account.signUserOperation(toViemOperation(op)) };
}

export interface Executed {
  readonly success: boolean;
  readonly actualGasUsed: bigint;
  readonly actualGasCost: bigint;
}

/** handleOps from the dev chain's owner; returns the UserOperationEvent's figures. */
export async function handleOp(dev: DevChain, version: SimpleVersion, op: UnpackedUserOperationV07): Promise<Executed> {
  const abi = version === '0.8' ? entryPoint08Abi : entryPoint07Abi;
  const hash = await dev.client.writeContract({
    address: dev.entryPoints[version],
    abi,
    functionName: 'handleOps',
    args: [[packUserOperationV07(op)], dev.client.account.address],
    gas: 5_000_000n,
  });
  const receipt = await waitForSuccess(dev.client, hash, 'handleOps');
  const [event] = parseEventLogs({ abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  assert.ok(event, 'a UserOperationEvent');
  return {
    success: event.args.success,
    actualGasUsed: event.args.actualGasUsed,
    actualGasCost: event.args.actualGasCost,
  };
}

export async function fund(dev: DevChain, address: Address): Promise<void> {
  await dev.client.setBalance({ address, value: parseEther('1') });
}
