import {
  type Address,
  type createPublicClient,
  createWalletClient,
  type Hex,
  http,
  parseAbi,
  parseEther,
  parseEventLogs,
  type TransactionReceipt,
} from 'viem';
import { entryPoint06Abi, getUserOperationHash } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ValidationError } from '../errors/PatronError.js';
import type { UserOperationV06 } from '../paymaster/entryPoints/v06/patronPaymasterV06.js';

/** The steps `patron demo` shares between its sponsored and its token-paid operation. */
export const factoryAbi = parseAbi([
  'function getAddress(address owner, uint256 salt) view returns (address)',
  'function createAccount(address owner, uint256 salt) returns (address)',
]);
export const accountAbi = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function executeBatch(address[] dest, bytes[] func)',
]);

/** The paymaster fields of a sponsored or token-paid result (spec §2.6). */
export interface PaymasterFields {
  paymasterAndData: Hex;
  callGasLimit: number;
  verificationGasLimit: number;
  preVerificationGas: string;
}

export type Wallet = ReturnType<typeof createWalletClient>;
export type PublicClient = ReturnType<typeof createPublicClient>;

export interface ChainInfo {
  chainId: number;
  entryPoint: Address;
  paymaster: Address;
  embedded: boolean;
  rpcPath?: string;
  simpleAccountFactory?: Address;
}

export function printFields(r: PaymasterFields, print: (line: string) => void) {
  print(
    `   callGasLimit ${r.callGasLimit}, verificationGasLimit ${r.verificationGasLimit}, preVerificationGas ${r.preVerificationGas}`,
  );
  print(`   paymasterAndData ${r.paymasterAndData}`);
}

/** The op as the Biconomy v0.6 SDKs send it: hex nonce and fees, no gas limits (Patron computes them). */
export function toWire(op: {
  sender: Address;
  nonce: bigint;
  initCode: Hex;
  callData: Hex;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}) {
  return {
    ...op,
    nonce: `0x${op.nonce.toString(16)}`,
    maxFeePerGas: `0x${op.maxFeePerGas.toString(16)}`,
    maxPriorityFeePerGas: `0x${op.maxPriorityFeePerGas.toString(16)}`,
    signature: '0x',
  };
}

/** The op with the paymaster's fields, signed by the SimpleAccount owner over its v0.6 userOpHash. */
export async function signOp(args: {
  op: Omit<
    UserOperationV06,
    'callGasLimit' | 'verificationGasLimit' | 'preVerificationGas' | 'paymasterAndData' | 'signature'
  >;
  fields: PaymasterFields;
  owner: ReturnType<typeof privateKeyToAccount>;
  dev: ChainInfo;
}): Promise<{ op: UserOperationV06; userOpHash: Hex }> {
  const full: UserOperationV06 = {
    ...args.op,
    callGasLimit: BigInt(args.fields.callGasLimit),
    verificationGasLimit: BigInt(args.fields.verificationGasLimit),
    preVerificationGas: BigInt(args.fields.preVerificationGas),
    paymasterAndData: args.fields.paymasterAndData,
    signature: '0x',
  };
  const userOpHash = getUserOperationHash({
    chainId: args.dev.chainId,
    entryPointAddress: args.dev.entryPoint,
    entryPointVersion: '0.6',
    userOperation: full,
  });
  return { op: { ...full, signature: await args.owner.signMessage({ message: { raw: userOpHash } }) }, userOpHash };
}

/** A throwaway bundler EOA, funded through the dev chain's test RPC. */
export async function fundedBundler(client: PublicClient, chainUrl: string): Promise<Wallet> {
  const bundler = privateKeyToAccount(generatePrivateKey());
  await client.request({
    method: 'hardhat_setBalance' as 'eth_chainId',
    params: [bundler.address, `0x${parseEther('1').toString(16)}`] as never,
  });
  return createWalletClient({ account: bundler, transport: http(chainUrl) });
}

export async function mined(client: PublicClient, hash: Hex): Promise<TransactionReceipt> {
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new ValidationError(`transaction ${hash} reverted`);
  return receipt;
}

/** handleOps with one op; the paymaster's EntryPoint deposit around it and the op's UserOperationEvent. */
export async function submit(args: {
  client: PublicClient;
  bundler: Wallet;
  dev: ChainInfo;
  signed: UserOperationV06;
}) {
  const { client, dev, bundler } = args;
  const deposit = () =>
    client.readContract({
      address: dev.entryPoint,
      abi: entryPoint06Abi,
      functionName: 'balanceOf',
      args: [dev.paymaster],
    });
  const depositBefore = await deposit();
  const beneficiary = bundler.account?.address;
  if (beneficiary === undefined) throw new ValidationError('the bundler wallet has no account');
  const hash = await bundler.writeContract({
    chain: null,
    account: bundler.account ?? null,
    address: dev.entryPoint,
    abi: entryPoint06Abi,
    functionName: 'handleOps',
    args: [[args.signed], beneficiary],
  });
  const receipt = await client.waitForTransactionReceipt({ hash });
  const [event] = parseEventLogs({ abi: entryPoint06Abi, eventName: 'UserOperationEvent', logs: receipt.logs });
  return { receipt: { ...receipt, depositBefore, depositAfter: await deposit() }, event };
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
