import { getAddress } from 'viem';
import {
  blockAt,
  readUserOperationEvents,
  readUserOperationEventsOfSenders,
  type UserOperationEventLog,
} from '../chain/userOperationEvents.js';
import { usdMicrosOfWei } from '../pricing/usdMicrosOfWei.js';
import type { ChainCursorKey } from '../store/ledger/chainCursorRepository.js';
import { ChainMovedError, hashOf } from './ChainMovedError.js';
import type { SettlementFollowerDeps } from './settlementFollowerDeps.js';
import { sliceTokenCharges } from './sliceTokenCharges.js';

/** Open reservations' senders whose ops paid by others a slice reads at most (10 eth_getLogs). */
export const FOREIGN_SENDERS_PER_SLICE = 1000;

/**
 * The slice's UserOperationEvents of the senders of this paymaster's open reservations whose paymaster is another
 * (or none): each means an open reservation's (sender, nonce) may be used. Nothing read when none is open.
 */
async function foreignOpsOfOpenSenders(args: {
  readonly deps: SettlementFollowerDeps;
  readonly from: bigint;
  readonly to: bigint;
}): Promise<UserOperationEventLog[]> {
  const { chain, ledger } = args.deps;
  const senders = await ledger.openSenders({
    chainId: chain.chainId,
    paymaster: chain.paymaster,
    limit: FOREIGN_SENDERS_PER_SLICE,
  });
  if (senders.length === 0) return [];
  const events = await readUserOperationEventsOfSenders({
    ...chain,
    senders: senders.map((s) => getAddress(s)),
    fromBlock: args.from,
    toBlock: args.to,
  });
  return events.filter((e) => e.paymaster.toLowerCase() !== chain.paymaster.toLowerCase());
}

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
  // A tank's follower reads every op of its sender already and closes only the tank's rows (README.md, "MEE gas tanks").
  const tank = chain.follows === 'sender';
  const foreign = tank ? [] : await foreignOpsOfOpenSenders({ deps, from, to });
  // The logs and the hash the cursor will carry must come from one chain: re-read it after the logs.
  const hashAfter = await hashOf({ chain, blockNumber: to });
  const mixed = [...events, ...foreign].some(
    (e) => e.blockNumber === to && e.blockHash.toLowerCase() !== hashAfter.toLowerCase(),
  );
  if (before.hash !== hashAfter || mixed) throw new ChainMovedError(`block ${to} changed while it was read`);
  // A tank's payment keeps its reserved amounts: no price is read for it.
  const price = tank ? undefined : deps.nativeUsdMicros(chain.chainId);
  const { paidByUser, tellTokenCharge } = sliceTokenCharges({ deps, events, from, to });
  if (events.length > 0 || foreign.length > 0) await deps.beforeClose?.();
  const signatureOf = deps.includedSignature;
  let settled = 0;
  for (const [i, e] of events.entries()) {
    const closing = deps.ledger.settleUserOp({
      chainId: chain.chainId,
      userOpHash: e.userOpHash,
      opKey: e.opKey,
      actualWei: e.actualGasCost,
      actualUsdMicros: price === undefined ? undefined : usdMicrosOfWei(e.actualGasCost, price),
      now: deps.now(),
      block: { number: e.blockNumber, hash: e.blockHash },
      paymaster: chain.paymaster,
      paidByUser: paidByUser(e, i),
      included: { txHash: e.transactionHash, success: e.success },
      // Only when several dApps signed the op key: which one's signature the op carried (README.md, "Attribution").
      includedSignature: signatureOf === undefined ? undefined : () => signatureOf(e),
      fixedPayment: tank,
    });
    const { settled: ok, dappIds } = await closing;
    if (ok) settled++;
    await deps.onIncluded?.({ chainId: chain.chainId, event: e, dappIds }).catch((err: unknown) => {
      logger.warn({ err, chainId: chain.chainId, userOpHash: e.userOpHash }, 'settlement: onIncluded failed');
    });
    await tellTokenCharge(e, i, dappIds).catch((err: unknown) => {
      logger.warn({ err, chainId: chain.chainId, userOpHash: e.userOpHash }, 'settlement: onTokenCharged failed');
    });
    logger.debug(
      {
        chainId: chain.chainId,
        userOpHash: e.userOpHash,
        actualGasCost: e.actualGasCost.toString(),
        settled: ok,
        dappIds,
      },
      'settlement: UserOperationEvent',
    );
  }
  // Ops of open reservations' senders that someone else paid for: their keys' nonces are used (README.md).
  for (const e of foreign) {
    const closed = await deps.ledger.supersedeOpKey({
      opKey: e.opKey,
      paidBy: e.paymaster,
      sender: e.sender,
      now: deps.now(),
      block: { number: e.blockNumber, hash: e.blockHash },
      included: { txHash: e.transactionHash, success: e.success },
    });
    if (closed > 0) {
      logger.info(
        { chainId: chain.chainId, sender: e.sender, nonce: e.nonce.toString(), closed },
        'settlement: op key used by another op',
      );
    }
  }
  await cursors.advance({ ...key, to: { blockNumber: to, blockHash: hashAfter }, now: deps.now() });
  return { settled, unmatched: events.length - settled, timestamp: before.timestamp };
}
