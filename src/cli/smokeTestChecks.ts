import { type Address, formatEther, getAddress, type Hex } from 'viem';
import { z } from 'zod';
import { ValidationError } from '../errors/PatronError.js';

/**
 * The checks of `patron demo --api-key` (smokeTest.ts) that need no chain client: what the Patron at --url says it
 * serves, JSON-RPC calls with failures named after what was called, and the EntryPoint's "AAxx" reasons explained
 * with what the smoke test read on chain (ERC-4337 §"Error codes": the EntryPoint's FailedOp reasons).
 */

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const chainsAnswer = z.object({
  signer: address,
  chains: z.array(
    z.object({
      chainId: z.number(),
      embedded: z.boolean(),
      deployments: z.array(
        z.object({ entryPointVersion: z.enum(['0.6', '0.7', '0.8', '0.9']), entryPoint: address, paymaster: address }),
      ),
    }),
  ),
});

export interface PatronDeployment {
  readonly signer: Address;
  readonly chainIds: readonly number[];
  readonly entryPointVersion: '0.6' | '0.7' | '0.8' | '0.9';
  readonly entryPoint: Address;
  readonly paymaster: Address;
}

/** `GET {url}/api/chains`: the Patron answers, serves the chain, and has a paymaster for the EntryPoint version. */
export async function patronDeployment(args: {
  baseUrl: string;
  chainId: number;
  entryPointVersion: string | undefined;
}): Promise<PatronDeployment> {
  const url = `${args.baseUrl}/api/chains`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  } catch (err) {
    throw new ValidationError(`the Patron at ${args.baseUrl} is not reachable (${reasonOf(err)}): check --url`);
  }
  const parsed = chainsAnswer.safeParse(await res.json().catch(() => undefined));
  if (!res.ok || !parsed.success) {
    throw new ValidationError(
      `${url} answered HTTP ${res.status} without Patron's chain list: --url is the base URL of a Patron (no /api/v1/… path)`,
    );
  }
  const chainIds = parsed.data.chains.map((c) => c.chainId);
  const chain = parsed.data.chains.find((c) => c.chainId === args.chainId);
  if (chain === undefined) {
    throw new ValidationError(
      `chain ${args.chainId} is not served by ${args.baseUrl} (it serves ${chainIds.join(', ') || 'none'}): check --chain and PATRON_CHAINS`,
    );
  }
  const versions = chain.deployments.map((d) => `v${d.entryPointVersion}`).join(', ');
  const deployment =
    args.entryPointVersion === undefined
      ? chain.deployments[0]
      : chain.deployments.find((d) => d.entryPointVersion === args.entryPointVersion);
  if (deployment === undefined) {
    throw new ValidationError(
      `chain ${args.chainId} has no EntryPoint v${args.entryPointVersion ?? '?'} paymaster on ${args.baseUrl} (it has ${versions}): check --entry-point-version`,
    );
  }
  return {
    signer: getAddress(parsed.data.signer),
    chainIds,
    entryPointVersion: deployment.entryPointVersion,
    entryPoint: getAddress(deployment.entryPoint),
    paymaster: getAddress(deployment.paymaster),
  };
}

export interface RpcAnswer {
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string };
}

/** One JSON-RPC call; a transport failure or a non-JSON answer is a failure naming `what` was called. */
export async function jsonRpc(args: {
  url: string;
  method: string;
  params: unknown[];
  what: string;
}): Promise<RpcAnswer> {
  let res: Response;
  try {
    res = await fetch(args.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: args.method, params: args.params }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new ValidationError(`${args.what} is not reachable (${args.method}: ${reasonOf(err)})`);
  }
  const body = (await res.json().catch(() => undefined)) as RpcAnswer | undefined;
  if (body === undefined || (body.result === undefined && body.error === undefined)) {
    throw new ValidationError(`${args.what} answered ${args.method} with HTTP ${res.status} and no JSON-RPC answer`);
  }
  return body;
}

/** What the smoke test read on chain, to say why the EntryPoint refused the op. */
export interface ChainFacts {
  readonly paymaster: Address;
  readonly patronSigner: Address;
  /** The keys the paymaster accepts (its signer set), when it has one. */
  readonly signers: readonly Address[] | undefined;
  readonly depositWei: bigint;
  /** The most the op may cost (its gas limits × maxFeePerGas), once known. */
  readonly maxCostWei?: bigint;
}

/** The "AAxx …" reason inside `message` explained, or `message` unchanged when it names none. */
export function explainFailure({ message, facts }: { message: string; facts: ChainFacts }): string {
  const code = /\bAA(\d\d)\b/.exec(message)?.[1];
  const hint = code === undefined ? undefined : aaHint({ code, facts });
  return hint === undefined ? message : `${message}: ${hint}`;
}

function aaHint({ code, facts: f }: { code: string; facts: ChainFacts }): string | undefined {
  const deposit = `${formatEther(f.depositWei)} ETH`;
  const cost = f.maxCostWei === undefined ? '' : `, the op may cost up to ${formatEther(f.maxCostWei)} ETH`;
  switch (code) {
    case '34':
      if (f.signers !== undefined && !f.signers.includes(f.patronSigner)) {
        return `the paymaster ${f.paymaster} rejected Patron's signature: its signers are ${f.signers.join(', ') || 'none'}, Patron signs as ${f.patronSigner}. Its owner runs \`patron paymaster add-signer --signer ${f.patronSigner}\`, or Patron gets the key of one of its signers (docs/guides/signer-rotation.md)`;
      }
      return `the paymaster ${f.paymaster} rejected Patron's signature although it verifies ${f.patronSigner}: the signature was made for another chain id or paymaster (check PATRON_CHAINS and --rpc)`;
    case '31':
      return `the paymaster ${f.paymaster} has ${deposit} deposited in the EntryPoint${cost}: top it up with \`patron paymaster deposit\``;
    case '32':
      return "Patron's signature is expired or not yet valid on this chain: compare the clock of Patron's host with the chain's latest block time";
    case '33':
      return `the paymaster ${f.paymaster} reverted in validatePaymasterUserOp: is it Patron's paymaster for this EntryPoint version?`;
    case '30':
      return `no paymaster contract at ${f.paymaster} on this chain: check PATRON_CHAINS and --rpc`;
    case '21':
      return 'the account was asked to pay for itself: the op carried no paymaster';
    case '24':
      return "the account rejected its owner's signature";
    case '25':
      return 'the account nonce is not the next one (an op of this account is pending?)';
    case '13':
    case '14':
    case '15':
      return 'the account factory did not deploy the sender: check --factory';
    default:
      return undefined;
  }
}

/** One line: viem's short message with the HTTP status and details, or the error's message and its cause's. */
export function reasonOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const { shortMessage, status, details } = err as { shortMessage?: unknown; status?: unknown; details?: unknown };
  if (typeof shortMessage === 'string') {
    const http = typeof status === 'number' ? ` HTTP ${status}` : '';
    return `${shortMessage}${http}${typeof details === 'string' && details !== '' ? `: ${details}` : ''}`;
  }
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}

/** The JSON object of --webhook-data (a dApp's webhook reads it as `data`). */
export function parseWebhookData(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError('--webhook-data takes a JSON object, e.g. \'{"num":2}\'');
  }
  return value as Record<string, unknown>;
}

export const hex = (n: bigint): Hex => `0x${n.toString(16)}`;
