import { z } from 'zod';
import { forkEndpointForDisplay } from '../config/devChainForkSettings.js';
import { StartRefusedError } from '../errors/StartRefusedError.js';

/**
 * What the dev chain forks, read from the endpoint before EDR is given it: the chain's id (the fork keeps it, so
 * signatures and the EntryPoints' hashes are the remote chain's), the block (pinned: EDR otherwise picks a "safe"
 * block some way behind the head, which a restart could not reproduce), its timestamp (the fork's clock starts
 * there), and whether the chain is an OP-stack L2 (its GasPriceOracle predeploy has code), which EDR must run with
 * its OP chain type for the L1 fee and the deposit transactions in the chain's blocks.
 */
export interface ForkOrigin {
  readonly url: string;
  readonly httpHeaders: Readonly<Record<string, string>>;
  readonly chainId: number;
  readonly blockNumber: bigint;
  /** Seconds, the forked block's. */
  readonly timestamp: bigint;
  readonly opStack: boolean;
}

/** The OP stack's GasPriceOracle predeploy (present on every OP-stack chain from genesis, Bedrock onwards). */
export const OP_STACK_GAS_PRICE_ORACLE = '0x420000000000000000000000000000000000000F';

const quantity = z.string().regex(/^0x[0-9a-fA-F]+$/);
const answer = z.union([
  z.object({ result: z.unknown() }),
  z.object({ error: z.object({ code: z.number(), message: z.string() }) }),
]);
const block = z.object({ number: quantity, timestamp: quantity });

/** The endpoint did not answer as a JSON-RPC node: perhaps not up yet, so a restart may succeed (exit code 1). */
export class ForkEndpointError extends Error {
  override readonly name = 'ForkEndpointError';
}

async function call(args: {
  readonly url: string;
  readonly httpHeaders: Readonly<Record<string, string>>;
  readonly method: string;
  readonly params: readonly unknown[];
  readonly timeoutMs: number;
}): Promise<unknown> {
  const where = `the fork endpoint ${forkEndpointForDisplay(args.url)} (PATRON_DEV_CHAIN_FORK_URL)`;
  let body: unknown;
  try {
    const res = await fetch(args.url, {
      method: 'POST',
      headers: { ...args.httpHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: args.method, params: args.params }),
      signal: AbortSignal.timeout(args.timeoutMs),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    body = await res.json();
  } catch (err) {
    // The cause's own words (ECONNREFUSED, a timeout), never its stack: this becomes the start failure's message.
    const cause = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new ForkEndpointError(`${where} did not answer ${args.method}: ${cause}`);
  }
  const parsed = answer.safeParse(body);
  if (!parsed.success) throw new ForkEndpointError(`${where} gave no JSON-RPC answer to ${args.method}`);
  if ('error' in parsed.data) {
    throw new ForkEndpointError(`${where} refused ${args.method}: ${parsed.data.error.message}`);
  }
  return parsed.data.result;
}

/** The endpoint's chain id alone (the CLI's view of which chain the server's fork serves). */
export async function readForkChainId(args: {
  readonly url: string;
  readonly httpHeaders: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}): Promise<number> {
  const answer = await call({ ...args, method: 'eth_chainId', params: [], timeoutMs: args.timeoutMs ?? 10_000 });
  const chainId = quantity.safeParse(answer);
  if (!chainId.success) throw new ForkEndpointError('the fork endpoint answered eth_chainId with no chain id');
  return Number(BigInt(chainId.data));
}

/** Reads the fork's origin; throws a message fit for the operator (no stack) when the endpoint cannot be forked. */
export async function readForkOrigin(args: {
  readonly url: string;
  readonly blockNumber: bigint | undefined;
  readonly httpHeaders: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}): Promise<ForkOrigin> {
  const ask = (method: string, params: readonly unknown[] = []) =>
    call({ url: args.url, httpHeaders: args.httpHeaders, method, params, timeoutMs: args.timeoutMs ?? 10_000 });
  const chainId = await readForkChainId(args);
  const head = quantity.safeParse(await ask('eth_blockNumber'));
  if (!head.success) throw new ForkEndpointError('the fork endpoint answered eth_blockNumber with no number');
  const blockNumber = args.blockNumber ?? BigInt(head.data);
  if (blockNumber > BigInt(head.data)) {
    throw new StartRefusedError(
      `PATRON_DEV_CHAIN_FORK_BLOCK=${blockNumber} is beyond the fork endpoint's latest block, ${BigInt(head.data)}`,
    );
  }
  const tag = `0x${blockNumber.toString(16)}`;
  const found = block.safeParse(await ask('eth_getBlockByNumber', [tag, false]));
  if (!found.success) {
    // A node that prunes history answers null for old blocks: forking needs state at the block (an archive node).
    throw new StartRefusedError(`the fork endpoint has no block ${blockNumber} (PATRON_DEV_CHAIN_FORK_BLOCK)`);
  }
  const oracleCode = await ask('eth_getCode', [OP_STACK_GAS_PRICE_ORACLE, tag]);
  return {
    url: args.url,
    httpHeaders: args.httpHeaders,
    chainId,
    blockNumber,
    timestamp: BigInt(found.data.timestamp),
    opStack: typeof oracleCode === 'string' && oracleCode !== '0x' && oracleCode !== '0x0',
  };
}
