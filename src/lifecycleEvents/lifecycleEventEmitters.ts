import { opKey } from '../chain/opKey.js';
import type { UserOperationEventLog } from '../chain/userOperationEvents.js';
import type { RequestFact } from '../paymaster/requestFacts.js';
import { usdMicrosOfWei } from '../pricing/usdMicrosOfWei.js';
import type { CallReport, OnCall } from '../rpc/callReport.js';
import type { LifecycleEventRepository } from '../store/events/lifecycleEventRepository.js';
import type { EventRecorder } from './eventRecorder.js';

/**
 * Where lifecycle events come from. Every event of one op carries the same op key, the chain's key of the op by
 * (chain, EntryPoint, sender, nonce) (chain/opKey.ts), which the signature and the UserOperationEvent both give:
 * the outbox delivers one op's events in order by it.
 */

/** `sponsorship.signed`: an observer of finished paymaster calls (rpc/callReport.ts), O(1) on the request path. */
export function lifecycleEventsOnCall(recorder: EventRecorder): OnCall {
  return (report: CallReport) => {
    if (report.error !== undefined) return;
    let signed: Extract<RequestFact, { kind: 'signed' }> | undefined;
    let policy: Extract<RequestFact, { kind: 'policy' }> | undefined;
    for (const f of report.facts) {
      if (f.kind === 'signed') signed = f;
      else if (f.kind === 'policy') policy = f;
    }
    if (signed === undefined) return;
    const s = signed;
    const decision = policy?.decision;
    recorder.record({
      dappId: report.dappId,
      at: report.at,
      build: () => ({
        type: 'sponsorship.signed',
        opKey: opKey({ chainId: s.chainId, entryPoint: s.entryPoint, sender: s.sender, nonce: s.nonce }),
        // The reservation's release (unused) writes `sponsorship.expired` for the dApps of its signed events.
        ref: decision?.reservationId,
        data: {
          chainId: s.chainId,
          entryPoint: s.entryPoint,
          paymaster: s.paymaster,
          sender: s.sender,
          nonce: s.nonce.toString(),
          userOpHash: s.userOpHash(),
          method: report.method,
          mode: s.mode,
          worstCaseWei: s.worstCaseWei.toString(),
          validUntil: s.validUntil,
          policyIds: decision?.policyIds ?? [],
          reservationId: decision?.reservationId ?? null,
          reserved: (decision?.charges ?? []).map((c) => ({ unit: c.unit, amount: c.amount })),
        },
      }),
    });
  };
}

/**
 * The dApps an included op's later events go to: those whose signature it carried (settlement's attribution,
 * `charged`) among those its `sponsorship.signed` event was written for (an op is followed only when its signature
 * was: a dApp with an endpoint, its event flushed). Another dApp that signed the same op key hears nothing of it.
 * With no attribution (no reservation of the op at all, a row from before migration 0022 aside), every dApp whose
 * signed event names the op key.
 */
export async function dappsToTell(
  events: Pick<LifecycleEventRepository, 'dappsOfOp'>,
  opKey: string,
  charged: readonly string[],
): Promise<string[]> {
  const signed = await events.dappsOfOp(opKey);
  return charged.length === 0 ? signed : signed.filter((d) => charged.includes(d));
}

/** `sponsorship.included`: from settlement's onIncluded, for the dApps dappsToTell names. */
export function createIncludedEmitter(deps: {
  readonly recorder: EventRecorder;
  readonly events: Pick<LifecycleEventRepository, 'dappsOfOp'>;
  readonly nativeUsdMicros: (chainId: number) => bigint | undefined;
  readonly now: () => number;
}): (args: {
  readonly chainId: number;
  readonly event: UserOperationEventLog;
  readonly dappIds: readonly string[];
}) => Promise<void> {
  return async ({ chainId, event: e, dappIds }) => {
    // A signature recorded a moment ago (a chain with no confirmations) must be in the outbox to be found.
    await deps.recorder.flush();
    const dapps = await dappsToTell(deps.events, e.opKey, dappIds);
    if (dapps.length === 0) return;
    const price = deps.nativeUsdMicros(chainId);
    // Settlement's conversion at this moment's native price; null when there is no fresh price.
    const usdMicros = price === undefined ? undefined : usdMicrosOfWei(e.actualGasCost, price);
    const at = deps.now();
    for (const dappId of dapps) {
      deps.recorder.record({
        dappId,
        at,
        build: () => ({
          type: 'sponsorship.included',
          opKey: e.opKey,
          // Once per op and block whoever reads it (a restart, a re-read); a reorg's new block is a new inclusion.
          dedupeKey: `sponsorship.included:${dappId}:${e.opKey}:${e.blockHash.toLowerCase()}`,
          block: { chainId, number: e.blockNumber, hash: e.blockHash },
          data: {
            chainId,
            sender: e.sender,
            nonce: e.nonce.toString(),
            userOpHash: e.userOpHash,
            transactionHash: e.transactionHash,
            blockNumber: e.blockNumber.toString(),
            blockHash: e.blockHash,
            success: e.success,
            actualGasCostWei: e.actualGasCost.toString(),
            actualGasUsed: e.actualGasUsed.toString(),
            actualCostUsd: usdMicros === undefined ? null : formatMicros(usdMicros),
          },
        }),
      });
    }
  };
}

const formatMicros = (micros: bigint): string => {
  const whole = micros / 1_000_000n;
  const frac = (micros % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return frac === '' ? whole.toString() : `${whole}.${frac}`;
};
