import { type Address, BaseError, type Chain, defineChain, type Hex, parseAbi } from 'viem';
import type { createBundlerClient, UserOperationReceipt } from 'viem/account-abstraction';
import { ValidationError } from '../errors/PatronError.js';
import type { PublicClient } from './demoSteps.js';

/**
 * What `patron demo` shares between its ops now that they go through a bundler: the dev chain as a viem chain, the
 * JSON-RPC error a refused op carries, and the receipt printed as the bundler reports it (eth_getUserOperationReceipt).
 */

/** The dev chain as viem names it: the accounts' nonce managers key by `chain.id`. */
export function devChainOf(args: { chainId: number; chainUrl: string }): Chain {
  return defineChain({
    id: args.chainId,
    name: 'Patron dev chain',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [args.chainUrl] } },
  });
}

/** `error {code}: {message}` of the paymaster's refusal inside the SDK's error (viem wraps it twice or three times). */
export function rpcRefusal(err: unknown): string {
  if (!(err instanceof BaseError)) return String(err);
  const inner = err.walk((e) => typeof (e as { code?: unknown }).code === 'number' && e instanceof BaseError);
  const code = (inner as { code?: number } | null)?.code;
  const message = inner instanceof BaseError ? (inner.details ?? inner.shortMessage) : err.shortMessage;
  return code === undefined ? message : `error ${code}: ${message}`;
}

const depositAbi = parseAbi(['function balanceOf(address account) view returns (uint256)']);

/** The paymaster's EntryPoint deposit, read around an op to show it paid. */
export function depositOf(args: { client: PublicClient; entryPoint: Address; paymaster: Address }): Promise<bigint> {
  return args.client.readContract({
    address: args.entryPoint,
    abi: depositAbi,
    functionName: 'balanceOf',
    args: [args.paymaster],
  });
}

type Bundler = ReturnType<typeof createBundlerClient>;

/**
 * Waits for the op's receipt from the bundler (`eth_getUserOperationReceipt`) and prints it; throws when the op
 * reverted, so the demo never reports an op it did not see executed.
 */
export async function printReceipt(args: {
  bundler: Bundler;
  hash: Hex;
  step: string;
  print: (line: string) => void;
}): Promise<UserOperationReceipt> {
  const receipt = await args.bundler.waitForUserOperationReceipt({ hash: args.hash, timeout: 60_000 });
  const tx = receipt.receipt;
  args.print(
    `${args.step} eth_getUserOperationReceipt from the bundler: included in tx ${tx.transactionHash} (bundled by ${tx.from})`,
  );
  args.print(`   block ${tx.blockNumber}, status ${tx.status}, gasUsed ${tx.gasUsed}`);
  args.print(
    `   UserOperationEvent: success ${receipt.success}, paymaster ${String(receipt.paymaster)}, actualGasCost ${receipt.actualGasCost} wei`,
  );
  if (!receipt.success) throw new ValidationError(`the op ${args.hash} reverted: ${receipt.reason ?? 'no reason'}`);
  return receipt;
}
