import type { GuaranteeCapResets, GuaranteeCapSetting } from '../dappSettings/tokenGuarantees.js';
import { type CapWindow, capWindow } from './capWindows.js';
import type { LedgerCharge } from './policyGate.js';

/**
 * The cap of a dApp's token guarantees (dappSettings/tokenGuarantees.ts) on the spend ledger: one counter row per dApp and
 * window, charged in the same reservation as the guarantee it bounds (policyGate.ts `reserve`, `extraCharges`), so
 * it holds under concurrency and across instances exactly as a policy's cap does, and settlement closes it with the
 * reservation (released when the user paid, settled at the op's cost when the deposit did: src/settlement/README.md,
 * "Guarantees"). Its windows are a policy cap's (capWindows.ts: `capWindow` takes the guarantee's `resets`, so a
 * value the policies do not know fails to compile).
 */

/**
 * The counter row: `guarantee:<dappId>:<resets>:<window start>`. No policy key starts so (they start with the policy's
 * UUID), a changed limit keeps the row (its usage stays counted), a changed cycle starts anew.
 */
export function guaranteeLedgerKey(args: {
  readonly dappId: string;
  readonly resets: GuaranteeCapResets;
  readonly windowStart: number;
}): string {
  return `guarantee:${args.dappId}:${args.resets}:${args.windowStart}`;
}

/** The charge of one guarantee against the cap's current window: the op's worst case in wei, what the deposit can lose. */
export function guaranteeCapCharge(args: {
  readonly dappId: string;
  readonly cap: GuaranteeCapSetting;
  readonly worstCaseWei: bigint;
  readonly nowMs: number;
}): LedgerCharge & { readonly window: CapWindow } {
  const window = capWindow(args.cap.resets, args.nowMs);
  return {
    key: guaranteeLedgerKey({ dappId: args.dappId, resets: args.cap.resets, windowStart: window.start }),
    unit: 'wei',
    amount: args.worstCaseWei,
    limit: BigInt(args.cap.limitWei),
    windowEnd: window.end,
    window,
  };
}

/** The cap's current window as the admin API and the dashboard show it: settled (`usedWei`) and still open (`reservedWei`). */
export interface GuaranteeCapUsage {
  readonly limitWei: string;
  readonly resets: GuaranteeCapResets;
  readonly usedWei: string;
  readonly reservedWei: string;
  /** Unix ms, inclusive. */
  readonly windowStart: number;
  /** Unix ms, exclusive; absent for a cap that never resets. */
  readonly windowEnd?: number;
}

/** The usage of the cap's current window, from the ledger's counters (`counters`: the spend ledger's read). */
export async function guaranteeCapUsage(args: {
  readonly dappId: string;
  readonly cap: GuaranteeCapSetting;
  readonly nowMs: number;
  readonly counters: (
    keys: readonly string[],
  ) => Promise<ReadonlyMap<string, { readonly used: bigint; readonly reserved: bigint }>>;
}): Promise<GuaranteeCapUsage> {
  const charge = guaranteeCapCharge({ ...args, worstCaseWei: 0n });
  const counter = (await args.counters([charge.key])).get(charge.key);
  return {
    limitWei: args.cap.limitWei,
    resets: args.cap.resets,
    usedWei: (counter?.used ?? 0n).toString(),
    reservedWei: (counter?.reserved ?? 0n).toString(),
    windowStart: charge.window.start,
    ...(charge.window.end === undefined ? {} : { windowEnd: charge.window.end }),
  };
}
