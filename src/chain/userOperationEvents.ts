import { type Address, type Hex, type PublicClient, parseAbiItem } from 'viem';
import { opKey } from './opKey.js';

/**
 * The EntryPoint's `UserOperationEvent` (v0.6 and v0.7 emit the same event), one per included op: what the
 * settlement follower reads to replace a reservation by the op's real cost. See ERC-4337, "EntryPoint
 * definition": https://eips.ethereum.org/EIPS/eip-4337
 */
export const userOperationEventAbi = parseAbiItem(
  'event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)',
);

export interface UserOperationEventLog {
  /** Lower-case 0x hex, as the spend ledger stores it. */
  readonly userOpHash: Hex;
  /** opKey.ts: the key of an op signed before its gas was final (lower-case 0x hex). */
  readonly opKey: Hex;
  readonly sender: Address;
  readonly nonce: bigint;
  readonly paymaster: Address;
  readonly success: boolean;
  /** Wei the paymaster's deposit paid for the op (a reverted op pays too). */
  readonly actualGasCost: bigint;
  readonly actualGasUsed: bigint;
  readonly blockNumber: bigint;
  readonly blockHash: Hex;
  readonly transactionHash: Hex;
  readonly logIndex: number;
}

/** Blocks asked for in one eth_getLogs when the caller gives no bound: most public RPCs accept 2,000. */
export const DEFAULT_MAX_BLOCK_RANGE = 2000n;

/**
 * The `UserOperationEvent`s of `entryPoint` whose paymaster topic is `paymaster` (or, with `follows: 'sender'`, whose
 * sender topic is that address: an MEE gas tank's ops, whoever paid their gas), over [fromBlock, toBlock], in
 * block and log order. Read in slices of at most `maxBlockRange` blocks, because RPC providers refuse (or time
 * out on) wider eth_getLogs ranges.
 */
export async function readUserOperationEvents(args: {
  readonly chainId: number;
  readonly client: PublicClient;
  readonly entryPoint: Address;
  readonly paymaster: Address;
  readonly follows?: 'paymaster' | 'sender' | undefined;
  readonly fromBlock: bigint;
  readonly toBlock: bigint;
  readonly maxBlockRange?: bigint;
}): Promise<UserOperationEventLog[]> {
  const step = args.maxBlockRange ?? DEFAULT_MAX_BLOCK_RANGE;
  if (step < 1n) throw new RangeError('maxBlockRange must be at least 1');
  const found: UserOperationEventLog[] = [];
  for (let from = args.fromBlock; from <= args.toBlock; from += step) {
    const to = from + step - 1n < args.toBlock ? from + step - 1n : args.toBlock;
    const logs = await args.client.getLogs({
      address: args.entryPoint,
      event: userOperationEventAbi,
      args: args.follows === 'sender' ? { sender: args.paymaster } : { paymaster: args.paymaster },
      fromBlock: from,
      toBlock: to,
      // A log whose topics or data do not decode is not the EntryPoint's event: dropped, not half-read.
      strict: true,
    });
    for (const log of logs) {
      const e = eventOf(args, log);
      if (e !== undefined) found.push(e);
    }
  }
  return found;
}

type EventLog = Awaited<ReturnType<PublicClient['getLogs']>>[number] & {
  readonly args: {
    readonly userOpHash: Hex;
    readonly sender: Address;
    readonly paymaster: Address;
    readonly nonce: bigint;
    readonly success: boolean;
    readonly actualGasCost: bigint;
    readonly actualGasUsed: bigint;
  };
};

/** A mined log as the event; undefined for a pending one (no block yet: eth_getLogs over mined blocks never gives it). */
function eventOf(
  chain: { readonly chainId: number; readonly entryPoint: Address },
  log: EventLog,
): UserOperationEventLog | undefined {
  if (log.blockNumber === null || log.blockHash === null || log.transactionHash === null) return undefined;
  if (log.logIndex === null) return undefined;
  return {
    userOpHash: log.args.userOpHash.toLowerCase() as Hex,
    opKey: opKey({
      chainId: chain.chainId,
      entryPoint: chain.entryPoint,
      sender: log.args.sender,
      nonce: log.args.nonce,
    }).toLowerCase() as Hex,
    sender: log.args.sender,
    nonce: log.args.nonce,
    paymaster: log.args.paymaster,
    success: log.args.success,
    actualGasCost: log.args.actualGasCost,
    actualGasUsed: log.args.actualGasUsed,
    blockNumber: log.blockNumber,
    blockHash: log.blockHash,
    transactionHash: log.transactionHash,
    logIndex: log.logIndex,
  };
}

/** Senders per eth_getLogs of readUserOperationEventsOfSenders (an OR over the topic; providers accept this many). */
export const SENDERS_PER_QUERY = 100;

/**
 * The `UserOperationEvent`s of `entryPoint` over [fromBlock, toBlock] whose sender is one of `senders`, whatever
 * their paymaster: settlement reads them for the senders of its open reservations, so a reservation whose (sender,
 * nonce) an op paid by anyone else used is closed at once (its signatures can never be included). One eth_getLogs
 * per SENDERS_PER_QUERY senders.
 */
export async function readUserOperationEventsOfSenders(args: {
  readonly chainId: number;
  readonly client: PublicClient;
  readonly entryPoint: Address;
  readonly senders: readonly Address[];
  readonly fromBlock: bigint;
  readonly toBlock: bigint;
}): Promise<UserOperationEventLog[]> {
  const found: UserOperationEventLog[] = [];
  for (let i = 0; i < args.senders.length; i += SENDERS_PER_QUERY) {
    const logs = await args.client.getLogs({
      address: args.entryPoint,
      event: userOperationEventAbi,
      args: { sender: [...args.senders.slice(i, i + SENDERS_PER_QUERY)] },
      fromBlock: args.fromBlock,
      toBlock: args.toBlock,
      strict: true,
    });
    for (const log of logs) {
      const e = eventOf(args, log);
      if (e !== undefined) found.push(e);
    }
  }
  return found;
}

/** The hash of block `blockNumber`, or undefined when the chain has no such block (it is shorter). */
export async function blockHashAt(client: PublicClient, blockNumber: bigint): Promise<Hex | undefined> {
  return (await blockAt(client, blockNumber))?.hash;
}

/** Block `blockNumber`'s hash and timestamp (unix seconds), or undefined when the chain has no such block. */
export async function blockAt(
  client: PublicClient,
  blockNumber: bigint,
): Promise<{ readonly hash: Hex; readonly timestamp: bigint } | undefined> {
  const block = await client.getBlock({ blockNumber }).catch((err: unknown) => {
    if (err instanceof Error && err.name === 'BlockNotFoundError') return undefined;
    throw err;
  });
  return block?.hash == null ? undefined : { hash: block.hash, timestamp: block.timestamp };
}

/**
 * The paymaster's `TokenCharged` event (Patron's token mode, contracts/): the user paid for its op in tokens.
 * Settlement reads it to close a guarantee (src/settlement/README.md).
 */
export const tokenChargedEventAbi = parseAbiItem(
  'event TokenCharged(address indexed account, address indexed token, uint256 charge, uint256 actualGasCost)',
);

export interface TokenChargedLog {
  readonly account: Address;
  readonly transactionHash: Hex;
  readonly logIndex: number;
  readonly token: Address;
  /** What the paymaster kept, in the token's base units. */
  readonly charge: bigint;
}

/** The paymaster's TokenCharged logs over [fromBlock, toBlock] (one eth_getLogs: the caller slices the range). */
export async function readTokenCharged(args: {
  readonly client: PublicClient;
  readonly paymaster: Address;
  readonly fromBlock: bigint;
  readonly toBlock: bigint;
}): Promise<TokenChargedLog[]> {
  const logs = await args.client.getLogs({
    address: args.paymaster,
    event: tokenChargedEventAbi,
    fromBlock: args.fromBlock,
    toBlock: args.toBlock,
    strict: true,
  });
  return logs.flatMap((l) =>
    l.transactionHash === null || l.logIndex === null
      ? []
      : [
          {
            account: l.args.account,
            transactionHash: l.transactionHash,
            logIndex: l.logIndex,
            token: l.args.token,
            charge: l.args.charge,
          },
        ],
  );
}

/** The latest block number, read afresh (viem otherwise serves it from a cache for its polling interval). */
export function headBlockNumber(client: PublicClient): Promise<bigint> {
  return client.getBlockNumber({ cacheTime: 0 });
}
