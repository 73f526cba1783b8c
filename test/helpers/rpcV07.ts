import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPublicClient, custom, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { type PatronFixture, testKey } from './patronPaymasterV06.js';
import type { RpcFixture } from './rpcFixture.js';

/** Helpers for the v0.7+ paymaster URL tests (/api/v2): calls, a fresh SimpleAccount's op, the wire forms. */
export type V07Version = '0.7' | '0.8';

export interface RpcV2Answer {
  readonly status: number;
  readonly body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

/** One JSON-RPC call to `/api/v2/{chainId}/{apiKey}` through the app (the fixture's dApp unless `apiKey` says). */
export async function rpcV2(
  app: RpcFixture,
  method: string,
  params: unknown[],
  apiKey = app.tenant.apiKey,
): Promise<RpcV2Answer> {
  const res = await app.ctx.app.inject({
    method: 'POST',
    url: `/api/v2/${app.fx.chain.chainId}/${apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  return { status: res.statusCode, body: res.json() as RpcV2Answer['body'] };
}

let salt = 10_000n;
/** A fresh SimpleAccount of the version (deployed by the op) with calls of its own; fees at the chain's. */
export async function newSimpleAccountOp(
  fx: PatronFixture,
  version: V07Version,
  calls: readonly { to: `0x${string}`; data: `0x${string}` }[],
) {
  const owner = privateKeyToAccount(testKey(`rpc-v07-owner-${salt}`));
  const account = await toSimpleSmartAccount({
    client: createPublicClient({ chain: fx.client.chain, transport: custom(fx.chain) }),
    owner,
    index: salt++,
    entryPoint: { address: fx.entryPoints[version], version },
  });
  const { factory, factoryData } = await account.getFactoryArgs();
  const block = await fx.client.getBlock();
  const maxPriorityFeePerGas = 1_000_000_000n;
  const op = {
    sender: account.address,
    nonce: await account.getNonce(),
    factory,
    factoryData,
    callData: await account.encodeCalls(calls),
    maxFeePerGas: (block.baseFeePerGas ?? 0n) * 2n + maxPriorityFeePerGas,
    maxPriorityFeePerGas,
    signature: await account.getStubSignature(),
  };
  return { account, op };
}

/** The op as ERC-7677 clients send it (viem's formatUserOperationRequest): hex quantities. */
export function hexWire(op: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(op).map(([k, v]) => [k, typeof v === 'bigint' ? toHex(v) : v]));
}

/** The op as @biconomy/abstractjs sends it to pm_getFeeQuoteOrData / pm_sponsorUserOperation: decimal strings. */
export function decimalWire(op: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(op).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString(10) : v]));
}

export const quantity = (v: unknown): bigint => BigInt(String(v));
