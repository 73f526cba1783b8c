import {
  type Address,
  type createPublicClient,
  createWalletClient,
  type Hex,
  http,
  parseEther,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ValidationError } from '../errors/PatronError.js';

/** The steps `patron demo` shares between its sponsored, its token-paid and its EIP-7702 operation. */

export type Wallet = ReturnType<typeof createWalletClient>;
export type PublicClient = ReturnType<typeof createPublicClient>;

/** The dev chain as `GET /api/chains` describes it (the fields the demo reads). */
export interface ChainInfo {
  chainId: number;
  entryPoint: Address;
  paymaster: Address;
  deployments: { entryPointVersion: string; entryPoint: Address; paymaster: Address }[];
  embedded: boolean;
  rpcPath?: string;
  simpleAccountFactory?: Address;
  /** The dev bundler's URL, null when none runs. */
  bundlerUrl?: string | null;
  feeTokens?: { address: Address; symbol?: string; decimals?: number; usable: boolean }[];
}

/** The EntryPoint and Patron's paymaster of one version on the dev chain. */
export function deploymentOf(dev: ChainInfo, version: string): { entryPoint: Address; paymaster: Address } {
  const d = dev.deployments.find((x) => x.entryPointVersion === version);
  if (d === undefined) throw new ValidationError(`the dev chain has no EntryPoint v${version} served by Patron`);
  return { entryPoint: d.entryPoint, paymaster: d.paymaster };
}

/** A throwaway EOA, funded through the dev chain's test RPC: it sends the dev token's mint. */
export async function fundedWallet(client: PublicClient, chainUrl: string): Promise<Wallet> {
  const wallet = privateKeyToAccount(generatePrivateKey());
  await client.request({
    method: 'hardhat_setBalance' as 'eth_chainId',
    params: [wallet.address, `0x${parseEther('1').toString(16)}`] as never,
  });
  return createWalletClient({ account: wallet, transport: http(chainUrl) });
}

export async function mined(client: PublicClient, hash: Hex): Promise<TransactionReceipt> {
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new ValidationError(`transaction ${hash} reverted`);
  return receipt;
}

export async function postJson(url: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = (await res.json()) as { statusCode: number; message: string; data?: unknown };
  if (!res.ok) throw new ValidationError(`${url}: ${res.status} ${json.message}`);
  return json;
}

export async function deleteJson(url: string, headers: Record<string, string>, body: unknown) {
  await fetch(url, { method: 'DELETE', headers, body: JSON.stringify(body) });
}

export async function rpc(url: string, method: string, params: unknown[]) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
}
