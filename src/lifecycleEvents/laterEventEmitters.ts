import { randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import type { UserOperationEventLog } from '../chain/userOperationEvents.js';
import type { CapThresholdCrossing } from '../policies/capThresholds.js';
import type { PolicyRequest } from '../policies/policyGate.js';
import { microsToUsd } from '../policies/policySchema.js';
import type { LifecycleEventRepository, NewLifecycleEvent } from '../store/events/lifecycleEventRepository.js';
import type { EventRecorder } from './eventRecorder.js';
import { dappsToTell } from './lifecycleEventEmitters.js';

/**
 * The events after the signature and the inclusion (docs/guides/lifecycle-events.md): a cap's threshold, a reorg
 * that removed an inclusion, a token-mode op's charge. (`sponsorship.expired` is written by the ledger itself, in
 * the release's transaction: store/events/lifecycleEventWrites.ts.)
 */

const amountIn = (unit: string, amount: bigint): string => (unit === 'usd' ? microsToUsd(amount) : amount.toString());

/**
 * `policy.threshold`: the policy gate's onThreshold, on the request path, so an append to the recorder's queue and
 * nothing else. Ordered per cap (its op key is the cap's ledger key) and written once per dApp, cap, window and
 * threshold whichever instance sees the crossing (the outbox's dedupe key).
 */
export function createThresholdEmitter(deps: {
  readonly recorder: EventRecorder;
  readonly now: () => number;
}): (args: { readonly request: PolicyRequest; readonly crossing: CapThresholdCrossing }) => void {
  return ({ request, crossing }) => {
    const { charge: c, threshold } = crossing;
    const dappId = request.dappId;
    deps.recorder.record({
      dappId,
      at: deps.now(),
      build: () => ({
        type: 'policy.threshold',
        opKey: `cap:${c.key}`,
        dedupeKey: `policy.threshold:${dappId}:${c.key}:${c.window.start}:${threshold}`,
        data: {
          policyId: c.policyId,
          policyName: c.policyName,
          scope: c.scope,
          ...(c.scope === 'dapp' ? {} : { sender: request.sender }),
          unit: c.unit,
          threshold,
          used: amountIn(c.unit, crossing.committed),
          settled: amountIn(c.unit, crossing.used),
          limit: amountIn(c.unit, c.limit),
          windowStart: new Date(c.window.start).toISOString(),
          windowEnd: c.window.end === undefined ? null : new Date(c.window.end).toISOString(),
          chainId: request.chainId,
        },
      }),
    });
  };
}

const includedData = (payload: string): Record<string, unknown> => {
  const parsed: unknown = JSON.parse(payload);
  if (typeof parsed !== 'object' || parsed === null || !('data' in parsed)) return {};
  const data = (parsed as { data: unknown }).data;
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
};

/**
 * `sponsorship.reorged`: settlement's onReorg, before it rewinds. Every `sponsorship.included` of the chain above
 * the rewind whose block is no longer the chain's block at that height gets one, written straight to the outbox
 * (not the recorder's queue: the rewind that follows must not outrun it), once per dApp, op and removed block.
 * The recorder is flushed first, so an inclusion recorded a moment ago is in the outbox to be found.
 */
export function createReorgEmitter(deps: {
  readonly recorder: EventRecorder;
  readonly events: Pick<LifecycleEventRepository, 'includedAbove' | 'append'>;
  readonly now: () => number;
}): (args: {
  readonly chainId: number;
  readonly aboveBlock: bigint;
  readonly hashAt: (blockNumber: bigint) => Promise<Hex | undefined>;
}) => Promise<void> {
  return async ({ chainId, aboveBlock, hashAt }) => {
    await deps.recorder.flush();
    const included = await deps.events.includedAbove({ chainId, aboveBlock });
    if (included.length === 0) return;
    const canonical = new Map<bigint, Promise<string | undefined>>();
    const hashOf = (n: bigint) => {
      let h = canonical.get(n);
      if (h === undefined) {
        h = hashAt(n).then((x) => x?.toLowerCase());
        canonical.set(n, h);
      }
      return h;
    };
    const at = deps.now();
    const rows: NewLifecycleEvent[] = [];
    for (const e of included) {
      if ((await hashOf(e.blockNumber)) === e.blockHash.toLowerCase()) continue;
      const d = includedData(e.payload);
      const type = 'sponsorship.reorged';
      rows.push({
        id: `evt_${randomUUID()}`,
        dappId: e.dappId,
        type,
        opKey: e.opKey,
        payload: JSON.stringify({
          type,
          timestamp: new Date(at).toISOString(),
          data: {
            chainId,
            sender: d.sender,
            nonce: d.nonce,
            userOpHash: d.userOpHash,
            transactionHash: d.transactionHash,
            removedBlockNumber: e.blockNumber.toString(),
            removedBlockHash: e.blockHash,
          },
        }),
        createdAt: at,
        dedupeKey: `${type}:${e.dappId}:${e.opKey}:${e.blockHash.toLowerCase()}`,
      });
    }
    await deps.events.append(rows);
  };
}

/** A token-mode op's charge as settlement read it (chain/userOperationEvents.ts, readTokenCharges). */
export interface TokenChargeOfOp {
  readonly token: string;
  /** What the paymaster kept (TokenCharged's `charge`), token base units. */
  readonly charged: bigint;
  /** Taken from the account in validation (the prefund); 0 when the charge was collected in postOp (mode 2). */
  readonly prefunded: bigint;
  /** Sent back to the account in postOp. */
  readonly refunded: bigint;
}

/**
 * `token.charged`: settlement's onTokenCharged, for the dApps whose signature the op carried
 * (lifecycleEventEmitters.ts dappsToTell), after its `sponsorship.included` (the same op key, so in that order), once
 * per op and block.
 */
export function createTokenChargedEmitter(deps: {
  readonly recorder: EventRecorder;
  readonly events: Pick<LifecycleEventRepository, 'dappsOfOp'>;
  readonly now: () => number;
}): (args: {
  readonly chainId: number;
  readonly event: UserOperationEventLog;
  readonly dappIds: readonly string[];
  readonly charge: TokenChargeOfOp;
}) => Promise<void> {
  return async ({ chainId, event: e, dappIds, charge }) => {
    await deps.recorder.flush();
    const dapps = await dappsToTell(deps.events, e.opKey, dappIds);
    const at = deps.now();
    for (const dappId of dapps) {
      deps.recorder.record({
        dappId,
        at,
        build: () => ({
          type: 'token.charged',
          opKey: e.opKey,
          dedupeKey: `token.charged:${dappId}:${e.opKey}:${e.blockHash.toLowerCase()}`,
          data: {
            chainId,
            sender: e.sender,
            nonce: e.nonce.toString(),
            userOpHash: e.userOpHash,
            transactionHash: e.transactionHash,
            blockNumber: e.blockNumber.toString(),
            token: charge.token,
            prefunded: charge.prefunded.toString(),
            refunded: charge.refunded.toString(),
            charged: charge.charged.toString(),
            actualGasCostWei: e.actualGasCost.toString(),
          },
        }),
      });
    }
  };
}
