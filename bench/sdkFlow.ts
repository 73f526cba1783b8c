import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPimlicoClient } from 'permissionless/clients/pimlico';
import { type Hex, http, keccak256, stringToHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { EntryPointVersion } from '../src/chain/chainRegistry.js';
import {
  type BiconomyPartialOp,
  type BiconomySmartAccount,
  biconomySmartAccountFor,
} from '../test/helpers/biconomySmartAccountV2.js';
import { COUNTER_ADDRESS } from '../test/helpers/patronPaymasterV06.js';
import type { SdkE2eV07 } from '../test/helpers/sdkE2eV07.js';

/**
 * One client SDK flow of the sign-to-inclusion benchmark (signToInclusion.ts), called as the SDK's documentation
 * shows (and as the e2e tests drive it) through Patron's paymaster URL and alto on the dev chain. A flow builds its
 * account and clients once; `start` returns one op's send-and-wait, called N times, one op at a time (the first op
 * deploys the account, the others use its next nonce).
 */
export interface FlowContext {
  readonly x: SdkE2eV07;
  /** alto behind the translation of `@biconomy/account`'s bundler dialect (test/helpers/altoBundler.ts). */
  readonly biconomyBundlerUrl: string;
}

/** What a flow hands back per op: its hash and the bundle that carried it (read back from the chain). */
export interface SentOp {
  readonly userOpHash: Hex;
  readonly txHash: Hex;
}

export interface SdkFlow {
  readonly name: string;
  readonly version: EntryPointVersion;
  start(ctx: FlowContext): Promise<() => Promise<SentOp>>;
}

export const counterCall = { to: COUNTER_ADDRESS, data: '0x' as Hex };
/** viem's default receipt polling is every 4 s on a chain without a block time; the dev chain mines at once. */
export const receiptPolling = { pollingInterval: 100, timeout: 30_000 } as const;
export const ownerFor = (label: string) =>
  privateKeyToAccount(keccak256(stringToHex(`patron-bench-sign-to-inclusion-${label}`)));

/** The v0.6 URL for EntryPoint v0.6, the v0.7 SDKs' URL otherwise. */
export const paymasterUrlFor = (x: SdkE2eV07, version: EntryPointVersion) =>
  x.paymasterUrl(x.open.apiKey, version === '0.6' ? 'v1' : 'v2');

/** permissionless's SimpleAccount on that EntryPoint (v0.6: the dev chain's own factory, not at the canonical address). */
export function simpleAccount(x: SdkE2eV07, version: '0.6' | '0.7' | '0.8', label: string) {
  const owner = ownerFor(label);
  if (version === '0.6') {
    return toSimpleSmartAccount({
      client: x.publicClient,
      owner,
      entryPoint: { address: x.fx.entryPoints['0.6'], version: '0.6' },
      factoryAddress: x.fx.simpleAccountFactory,
    });
  }
  return toSimpleSmartAccount({
    client: x.publicClient,
    owner,
    entryPoint: { address: x.entryPoint(version), version },
  });
}

/** permissionless's Pimlico client on Patron's URL for that EntryPoint. */
export const pimlicoClientFor = (x: SdkE2eV07, version: '0.6' | '0.7') =>
  createPimlicoClient({
    transport: http(paymasterUrlFor(x, version)),
    entryPoint: { address: x.fx.entryPoints[version], version },
  });

/** viem's, permissionless's and abstractjs's bundler clients, as far as a flow uses them. */
interface OpSendingClient {
  sendUserOperation(args: { calls: readonly (typeof counterCall)[] }): Promise<Hex>;
  waitForUserOperationReceipt(args: {
    hash: Hex;
    pollingInterval: number;
    timeout: number;
  }): Promise<{ receipt: { transactionHash: Hex } }>;
}

/** One op calling the counter, sent by the SDK's client, then its receipt. */
export const sendsCounterCall = (client: OpSendingClient) => async (): Promise<SentOp> => {
  const userOpHash = await client.sendUserOperation({ calls: [counterCall] });
  const { receipt } = await client.waitForUserOperationReceipt({ hash: userOpHash, ...receiptPolling });
  return { userOpHash, txHash: receipt.transactionHash };
};

/** `@biconomy/account`'s Smart Account v2 client for the owner `label` names, on Patron's v0.6 URL. */
export const biconomyAccountFor = ({ x, biconomyBundlerUrl }: FlowContext, label: string) =>
  biconomySmartAccountFor({
    label: `bench-sign-to-inclusion-${label}`,
    base: x.base,
    chainId: x.chainId,
    bundlerUrl: biconomyBundlerUrl,
    paymasterUrl: paymasterUrlFor(x, '0.6'),
  });

/** `@biconomy/account`'s sendUserOp (the account signs, the SDK sends) and wait(). */
export async function sendBiconomyOp(account: BiconomySmartAccount, op: BiconomyPartialOp): Promise<SentOp> {
  const sent = await account.sendUserOp(op);
  const { receipt } = await sent.wait();
  return { userOpHash: sent.userOpHash, txHash: receipt.transactionHash };
}
