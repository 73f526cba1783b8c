import { blockHashAt } from '../chain/userOperationEvents.js';
import type { ChainCursor, ChainCursorKey } from '../store/ledger/chainCursorRepository.js';
import { hashOf } from './ChainMovedError.js';
import type { SettlementFollowerDeps } from './settlementFollowerDeps.js';

/** Below this a rewind would not reach before blocks a dev chain (0 confirmations) just replaced. */
const MIN_REWIND_BLOCKS = 16n;
/** A reorg deeper than this is an incident for an operator; re-reading more would not make it right. */
const MAX_REWIND_BLOCKS = 10_000n;

/**
 * The stored cursor, stepped back first when the chain no longer has its block (README.md, "Reorgs deeper than the
 * depth" and "A restarted dev chain on a kept database").
 */
export async function checkedCursor({
  deps,
  key,
  safe,
  firstRound,
}: {
  readonly deps: SettlementFollowerDeps;
  readonly key: ChainCursorKey;
  readonly safe: bigint;
  /** This follower's first round: only then is a mismatch on a fresh chain a previous run's chain. */
  readonly firstRound: boolean;
}): Promise<{ cursor: ChainCursor | undefined; reorg: boolean }> {
  const { chain, cursors, logger } = deps;
  const cursor = await cursors.get(key);
  if (cursor === undefined) return { cursor, reorg: false };
  const onChain = await blockHashAt(chain.client, cursor.blockNumber);
  if (onChain !== undefined && onChain.toLowerCase() === cursor.blockHash.toLowerCase()) {
    return { cursor, reorg: false };
  }
  if (deps.freshChain === true && firstRound) {
    // A new dev chain on a kept database: its history starts here, nothing of the old one is re-read.
    const to = { blockNumber: safe, blockHash: await hashOf({ chain, blockNumber: safe }) };
    logger.info(
      { chainId: chain.chainId, previous: cursor.blockNumber.toString(), block: safe.toString() },
      'settlement: a new dev chain; following it from its head',
    );
    const reset = await cursors.rewind({ ...key, from: cursor, to, now: deps.now() });
    return { cursor: reset ? to : await cursors.get(key), reorg: false };
  }
  const twice = 2n * BigInt(deps.confirmations);
  const step = twice < MIN_REWIND_BLOCKS ? MIN_REWIND_BLOCKS : twice > MAX_REWIND_BLOCKS ? MAX_REWIND_BLOCKS : twice;
  // A cursor past the safe head (a node resynced from scratch) steps back from there.
  const top = cursor.blockNumber < safe ? cursor.blockNumber : safe;
  const back = top - step < 0n ? 0n : top - step;
  const to = { blockNumber: back, blockHash: await hashOf({ chain, blockNumber: back }) };
  await deps.onReorg?.({
    chainId: chain.chainId,
    aboveBlock: back,
    hashAt: (n) => blockHashAt(chain.client, n),
  });
  // Only if no other process moved it meanwhile; with the cursor, every reservation closed by an event above
  // `back` is reopened, so the blocks read again settle it at the canonical branch's cost.
  const { rewound, reopened } = await deps.ledger.rewindSettlement({ ...key, from: cursor, to, now: deps.now() });
  logger.error(
    {
      chainId: chain.chainId,
      cursor: cursor.blockNumber.toString(),
      rewoundTo: back.toString(),
      found: onChain,
      reopened,
    },
    'settlement: the cursor block was replaced (a reorg deeper than the confirmations); re-reading',
  );
  return { cursor: rewound ? to : await cursors.get(key), reorg: true };
}
