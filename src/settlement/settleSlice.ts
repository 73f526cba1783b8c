import { blockAt, readUserOperationEvents } from '../chain/userOperationEvents.js';
import { usdMicrosOfWei } from '../pricing/usdMicrosOfWei.js';
import type { ChainCursorKey } from '../store/chainCursorRepository.js';
import { ChainMovedError, hashOf } from './ChainMovedError.js';
import type { SettlementFollowerDeps } from './settlementFollowerDeps.js';
import { sliceTokenCharges } from './sliceTokenCharges.js';

/**
 * Settles the ops included in blocks `from`..`to` (one eth_getLogs), tells the hooks of each, then moves the cursor
 * to `to`: settle first, cursor second (README.md, "Order and restarts").
 */
export async function settleSlice({
  deps,
  key,
  from,
  to,
}: {
  readonly deps: SettlementFollowerDeps;
  readonly key: ChainCursorKey;
  readonly from: bigint;
  readonly to: bigint;
}): Promise<{ settled: number; unmatched: number; timestamp: bigint }> {
  const { chain, cursors, logger } = deps;
  const before = await blockAt(chain.client, to);
  if (before === undefined) throw new ChainMovedError(`block ${to} of chain ${chain.chainId} is gone`);
  const events = await readUserOperationEvents({ ...chain, fromBlock: from, toBlock: to });
  // The logs and the hash the cursor will carry must come from one chain: re-read it after the logs.
  const hashAfter = await hashOf({ chain, blockNumber: to });
  const mixed = events.some((e) => e.blockNumber === to && e.blockHash.toLowerCase() !== hashAfter.toLowerCase());
  if (before.hash !== hashAfter || mixed) throw new ChainMovedError(`block ${to} changed while it was read`);
  const price = deps.nativeUsdMicros(chain.chainId);
  const { paidByUser, tellTokenCharge } = sliceTokenCharges({ deps, events, from, to });
  let settled = 0;
  for (const [i, e] of events.entries()) {
    const settle = (userOpHash: string) =>
      deps.ledger.settleUserOp({
        chainId: chain.chainId,
        userOpHash,
        actualWei: e.actualGasCost,
        actualUsdMicros: price === undefined ? undefined : usdMicrosOfWei(e.actualGasCost, price),
        now: deps.now(),
        block: { number: e.blockNumber, hash: e.blockHash },
        paymaster: chain.paymaster,
        paidByUser: paidByUser(e, i),
        included: { txHash: e.transactionHash, success: e.success },
      });
    // A signature made before the op's gas was final is reserved under its op key (chain/opKey.ts).
    const ok = (await settle(e.userOpHash)) || (await settle(e.opKey));
    if (ok) settled++;
    await deps.onIncluded?.({ chainId: chain.chainId, event: e }).catch((err: unknown) => {
      logger.warn({ err, chainId: chain.chainId, userOpHash: e.userOpHash }, 'settlement: onIncluded failed');
    });
    await tellTokenCharge(e, i).catch((err: unknown) => {
      logger.warn({ err, chainId: chain.chainId, userOpHash: e.userOpHash }, 'settlement: onTokenCharged failed');
    });
    logger.debug(
      { chainId: chain.chainId, userOpHash: e.userOpHash, actualGasCost: e.actualGasCost.toString(), settled: ok },
      'settlement: UserOperationEvent',
    );
  }
  await cursors.advance({ ...key, to: { blockNumber: to, blockHash: hashAfter }, now: deps.now() });
  return { settled, unmatched: events.length - settled, timestamp: before.timestamp };
}
