import { tokenTransfersOfOp } from '../chain/tokenTransfersOfOp.js';
import { readTokenCharged, type TokenChargedLog, type UserOperationEventLog } from '../chain/userOperationEvents.js';
import type { SettlementFollowerDeps } from './settlementFollowerDeps.js';

/**
 * The token charges of one slice's ops (README.md, "Guarantees"): whether the user paid a guarantee's charge, for
 * the ledger, and token.charged's source (onTokenCharged). `events` are the slice's, in log order.
 */
export function sliceTokenCharges({
  deps,
  events,
  from,
  to,
}: {
  readonly deps: Pick<SettlementFollowerDeps, 'chain' | 'onTokenCharged'>;
  readonly events: readonly UserOperationEventLog[];
  readonly from: bigint;
  readonly to: bigint;
}): {
  readonly paidByUser: (e: UserOperationEventLog, i: number) => () => Promise<boolean>;
  readonly tellTokenCharge: (e: UserOperationEventLog, i: number, dappIds: readonly string[]) => Promise<void>;
} {
  const { chain } = deps;
  // The paymaster's TokenCharged logs of the slice, read once and only if a guarantee asks (README.md).
  let charged: Promise<TokenChargedLog[]> | undefined;
  // The op's postOp runs between the previous op's UserOperationEvent in the transaction and its own.
  const previousOf = (e: UserOperationEventLog, i: number) =>
    events
      .slice(0, i)
      .reverse()
      .find((p) => p.transactionHash === e.transactionHash);
  const chargeOf = async (e: UserOperationEventLog, i: number) => {
    charged ??= readTokenCharged({ client: chain.client, paymaster: chain.paymaster, fromBlock: from, toBlock: to });
    const previous = previousOf(e, i);
    return (await charged).find(
      (l) =>
        l.transactionHash === e.transactionHash &&
        l.account.toLowerCase() === e.sender.toLowerCase() &&
        l.logIndex < e.logIndex &&
        (previous === undefined || l.logIndex > previous.logIndex),
    );
  };
  const paidByUser = (e: UserOperationEventLog, i: number) => async () => (await chargeOf(e, i)) !== undefined;
  /** token.charged's source (onTokenCharged): the op's TokenCharged, and its transfers from the receipt. */
  const tellTokenCharge = async (e: UserOperationEventLog, i: number, dappIds: readonly string[]) => {
    // An MEE tank's ops are not paid in tokens through Patron's paymaster: there is no TokenCharged to read.
    if (deps.onTokenCharged === undefined || chain.follows === 'sender') return;
    const log = await chargeOf(e, i);
    if (log === undefined) return;
    const moved = await tokenTransfersOfOp({
      client: chain.client,
      entryPoint: chain.entryPoint,
      paymaster: chain.paymaster,
      token: log.token,
      account: e.sender,
      transactionHash: e.transactionHash,
      opLogIndex: e.logIndex,
      previousOpLogIndex: previousOf(e, i)?.logIndex,
    });
    await deps.onTokenCharged({
      chainId: chain.chainId,
      event: e,
      dappIds,
      charge: { token: log.token, charged: log.charge, ...moved },
    });
  };
  return { paidByUser, tellTokenCharge };
}
