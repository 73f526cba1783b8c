import { randomUUID } from 'node:crypto';
import { type Address, formatEther, getAddress, type Hex } from 'viem';
import { startPollLoop } from '../async/pollLoop.js';
import type { KeeperPaymasterSetting, KeeperSettings } from '../config/keeperSettings.js';
import type { AlertSender } from '../solvency/alertWebhook.js';
import type { FollowerLease } from '../store/db/followerLease.js';
import type { DepositTopup, DepositTopupRepository } from '../store/ledger/depositTopupRepository.js';
import { createKeeperAlerts, type KeeperAlertType } from './keeperAlerts.js';
import type { KeeperChain } from './keeperChain.js';
import { keeperMark, topupPlan } from './keeperMark.js';
import { topupProposal } from './topupProposal.js';

/**
 * The deposit keeper (src/keeper/README.md, docs/guides/operations.md "Deposit keeper"): every interval, per opted-in
 * paymaster, the instance holding its lease reads the deposit; under the mark it tops it up to the target with the
 * EntryPoint's depositTo from the funding key, capped by the daily limit's remainder (summed from the ledger) and by
 * the funder's balance beyond a reserve for gas, waits for the receipt and records it. A dry run records what it would
 * send; proposal mode records the Safe transaction for the owner to sign, once per need.
 */
export type KeeperOutcome =
  /** Another instance holds the paymaster's lease. */
  | 'standby'
  /** At or above the mark. */
  | 'ok'
  /** A top-up sent earlier is not mined yet, or the proposal of this need is open: nothing more this round. */
  | 'waiting'
  | 'confirmed'
  | 'failed'
  | 'dry_run'
  | 'proposed'
  | 'limit_reached'
  | 'funder_insufficient'
  /** The round could not run (a chain read failed): logged, tried again next interval. */
  | 'error';

export interface KeeperRound {
  readonly chainId: number;
  readonly paymaster: Address;
  readonly outcome: KeeperOutcome;
  readonly depositWei?: bigint;
  readonly markWei?: bigint;
}

/** One paymaster the keeper looks after, with what the solvency guard knows of it. */
export interface KeptPaymaster {
  readonly setting: KeeperPaymasterSetting;
  readonly chain: KeeperChain;
  /** The guard's figures for the mark: its live liabilities and spend rate, its floor and margin for this chain. */
  readonly solvency: () => {
    readonly liabilitiesWei: bigint;
    readonly spendWeiPerHour: bigint | undefined;
    readonly floorWei: bigint;
    readonly marginBps: bigint;
  };
}

/** Told of every round's outcome and every funder balance read (the metrics). */
export interface KeeperObserver {
  onOutcome(args: { readonly chainId: number; readonly paymaster: Address; readonly outcome: KeeperOutcome }): void;
  onFunderBalance(args: { readonly chainId: number; readonly funder: Address; readonly balanceWei: bigint }): void;
}

export interface DepositKeeperDeps {
  readonly paymasters: readonly KeptPaymaster[];
  readonly settings: Pick<KeeperSettings, 'intervalMs' | 'gasReserveWei' | 'lowFunderTopups'>;
  /** The funding key's address; undefined when every paymaster proposes. */
  readonly funder: Address | undefined;
  readonly ledger: DepositTopupRepository;
  /** One instance acts per paymaster (store/db/followerLease.ts; SQLite: always held). */
  readonly lease: FollowerLease;
  readonly alert: AlertSender | undefined;
  readonly observer?: KeeperObserver | undefined;
  readonly logger: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  readonly now: () => number;
  /** False: rounds only by runOnce() (tests). */
  readonly loop?: boolean;
  /** How long a round waits for its top-up's receipt before leaving it pending for the next round (default 2 min). */
  readonly receiptTimeoutMs?: number;
}

export interface DepositKeeper {
  /** One round over every paymaster now (the loop runs one every interval). */
  runOnce(): Promise<readonly KeeperRound[]>;
  /** Resolves once every alert posted so far was delivered or given up. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const DAY_MS = 86_400_000;
/** A sent top-up the node no longer knows after this long was dropped (replaced, or never propagated). */
const DROPPED_AFTER_MS = 15 * 60_000;

export function startDepositKeeper(deps: DepositKeeperDeps): DepositKeeper {
  const { settings, ledger, logger, now } = deps;
  const alerts = createKeeperAlerts({ sender: deps.alert, logger });
  /** Per paymaster: what was said during the current need (the deposit under the mark), said once per need. */
  const needs = new Map<string, Set<string>>();
  /** Per chain: whether the funder was last seen low (alerted once until it is not). */
  const funderLow = new Map<number, boolean>();
  const keyOf = (p: KeptPaymaster) => `keeper:${p.chain.chainId}:${p.chain.paymaster.toLowerCase()}`;

  function figures(p: KeptPaymaster, depositWei: bigint, markWei: bigint) {
    return {
      chainId: p.chain.chainId,
      paymaster: getAddress(p.chain.paymaster),
      entryPoint: getAddress(p.chain.entryPoint),
      mode: p.setting.mode,
      depositWei: depositWei.toString(),
      markWei: markWei.toString(),
      targetWei: p.setting.targetWei.toString(),
      dailyLimitWei: p.setting.dailyLimitWei.toString(),
    };
  }

  /** Posts `type` once per need of the paymaster (keyed by `key` within it). */
  function oncePerNeed(p: KeptPaymaster, key: string, type: KeeperAlertType, data: Record<string, unknown>): void {
    const said = needs.get(keyOf(p)) ?? new Set<string>();
    needs.set(keyOf(p), said);
    if (said.has(key)) return;
    said.add(key);
    alerts.post(type, data);
  }

  /** Closes what earlier rounds left pending; true while a sent top-up is still on its way. */
  async function reconcile(p: KeptPaymaster, pending: readonly DepositTopup[]): Promise<boolean> {
    let inFlight = false;
    for (const row of pending) {
      if (row.mode !== 'sent' || row.txHash === undefined) continue;
      const hash = row.txHash as Hex;
      const status = await p.chain.receipt(hash);
      if (status !== undefined) {
        await settleSent(p, row, status);
        continue;
      }
      if (now() - row.createdAt > DROPPED_AFTER_MS && !(await p.chain.known(hash))) {
        await ledger.settle({
          id: row.id,
          state: 'failed',
          reason: `${row.reason}; dropped: the node no longer knows ${hash}`,
          now: now(),
        });
        logger.error({ chainId: row.chainId, paymaster: row.paymaster, txHash: hash }, 'keeper: a top-up was dropped');
        alerts.post('paymaster.keeper.failed', { ...rowData(row), failure: 'dropped' });
        deps.observer?.onOutcome({ chainId: row.chainId, paymaster: p.chain.paymaster, outcome: 'failed' });
        continue;
      }
      inFlight = true;
    }
    return inFlight;
  }

  async function settleSent(
    p: KeptPaymaster,
    row: DepositTopup,
    status: 'success' | 'reverted',
  ): Promise<KeeperOutcome> {
    const ok = status === 'success';
    await ledger.settle({
      id: row.id,
      state: ok ? 'confirmed' : 'failed',
      ...(ok ? {} : { reason: `${row.reason}; reverted on chain` }),
      now: now(),
    });
    const depositAfter = await p.chain.readDeposit().catch(() => undefined);
    const data = { ...rowData(row), depositAfterWei: depositAfter?.toString() ?? null };
    const outcome: KeeperOutcome = ok ? 'confirmed' : 'failed';
    // Back at the mark: this need is over, and what was said of it may be said of the next.
    if (depositAfter !== undefined && depositAfter >= row.markWei) needs.delete(keyOf(p));
    if (ok) {
      logger.info(data, `keeper: topped up the deposit by ${formatEther(row.amountWei)} ETH`);
      alerts.post('paymaster.keeper.topped_up', data);
    } else {
      logger.error(data, 'keeper: the top-up reverted');
      alerts.post('paymaster.keeper.failed', { ...data, failure: 'reverted' });
    }
    deps.observer?.onOutcome({ chainId: row.chainId, paymaster: p.chain.paymaster, outcome });
    return outcome;
  }

  /** The funder under what the next N top-ups need (target − mark each) and its reserve: alerted once until it is not. */
  function watchFunder(p: KeptPaymaster, balanceWei: bigint, markWei: bigint): void {
    if (deps.funder === undefined) return;
    deps.observer?.onFunderBalance({ chainId: p.chain.chainId, funder: deps.funder, balanceWei });
    const each = p.setting.targetWei > markWei ? p.setting.targetWei - markWei : p.setting.targetWei;
    const neededWei = each * BigInt(settings.lowFunderTopups) + settings.gasReserveWei;
    const low = balanceWei < neededWei;
    if (low && funderLow.get(p.chain.chainId) !== true) {
      const data = {
        chainId: p.chain.chainId,
        funder: deps.funder,
        balanceWei: balanceWei.toString(),
        neededWei: neededWei.toString(),
        topups: settings.lowFunderTopups,
      };
      logger.warn(data, 'keeper: the funding key is low');
      alerts.post('paymaster.keeper.funder_low', data);
    }
    funderLow.set(p.chain.chainId, low);
  }

  async function round(p: KeptPaymaster): Promise<KeeperRound> {
    const { chainId, paymaster } = p.chain;
    const done = (outcome: KeeperOutcome, more: Partial<KeeperRound> = {}): KeeperRound => {
      if (outcome !== 'standby' && outcome !== 'ok' && outcome !== 'waiting' && outcome !== 'error') {
        deps.observer?.onOutcome({ chainId, paymaster, outcome });
      }
      return { chainId, paymaster, outcome, ...more };
    };
    if (!(await deps.lease.hold(keyOf(p)))) return done('standby');
    const pending = await ledger.pending({ chainId, paymaster });
    const inFlight = await reconcile(p, pending);
    const depositWei = await p.chain.readDeposit();
    const s = p.solvency();
    const markWei = keeperMark({
      liabilitiesWei: s.liabilitiesWei,
      marginBps: p.setting.marginBps ?? s.marginBps,
      floorWei: p.setting.floorWei ?? s.floorWei,
      spendWeiPerHour: s.spendWeiPerHour,
      leadTimeSeconds: p.setting.leadTimeSeconds,
      minimumWei: p.setting.minimumWei,
    });
    const proposals = pending.filter((r) => r.mode === 'proposed');
    const balanceWei = p.setting.mode === 'propose' ? undefined : await p.chain.readFunderBalance();
    if (balanceWei !== undefined) watchFunder(p, balanceWei, markWei);
    if (depositWei >= markWei) {
      // The need is over: its proposal met (by whoever sent it), and what was said of it may be said again.
      for (const r of proposals) {
        await ledger.settle({
          id: r.id,
          state: 'confirmed',
          reason: `${r.reason}; the deposit is back at the mark`,
          now: now(),
        });
      }
      needs.delete(keyOf(p));
      return done('ok', { depositWei, markWei });
    }
    if (inFlight || proposals.length > 0) return done('waiting', { depositWei, markWei });
    const spentWei = await ledger.sentSince({ chainId, paymaster, since: now() - DAY_MS });
    const plan = topupPlan({
      depositWei,
      markWei,
      targetWei: p.setting.targetWei,
      limitLeftWei: p.setting.dailyLimitWei - spentWei,
      spendableWei: balanceWei === undefined ? undefined : balanceWei - settings.gasReserveWei,
    });
    const data = { ...figures(p, depositWei, markWei), sentTodayWei: spentWei.toString() };
    if (plan.kind === 'none') return done('ok', { depositWei, markWei });
    if (plan.kind === 'refused') {
      const outcome = plan.by === 'limit' ? 'limit_reached' : 'funder_insufficient';
      const more = { ...data, wantedWei: plan.wantedWei.toString(), funder: deps.funder ?? null };
      const said = needs.get(keyOf(p));
      if (said?.has(outcome) !== true)
        logger.error(more, `keeper: below the mark and nothing may be sent (${outcome})`);
      if (plan.by === 'limit')
        oncePerNeed(p, outcome, 'paymaster.keeper.daily_limit_reached', { ...more, amountWei: '0' });
      else
        oncePerNeed(p, outcome, 'paymaster.keeper.failed', {
          ...more,
          failure: 'funder_insufficient',
          balanceWei: String(balanceWei ?? 0n),
        });
      return done(outcome, { depositWei, markWei });
    }
    const reason = `deposit ${formatEther(depositWei)} ETH under the mark ${formatEther(markWei)} ETH`;
    if (plan.cappedBy === 'limit') {
      oncePerNeed(p, 'limit_reached', 'paymaster.keeper.daily_limit_reached', {
        ...data,
        wantedWei: plan.wantedWei.toString(),
        amountWei: plan.amountWei.toString(),
      });
    }
    const row = {
      id: randomUUID(),
      chainId,
      paymaster,
      entryPoint: p.chain.entryPoint,
      amountWei: plan.amountWei,
      depositWei,
      markWei,
      targetWei: p.setting.targetWei,
      createdAt: now(),
    };
    if (p.setting.mode === 'propose') {
      const owner = await p.chain.readOwner();
      const proposal = topupProposal({ chain: p.chain, amountWei: plan.amountWei, owner, now: now() });
      await ledger.insert({
        ...row,
        funder: owner,
        mode: 'proposed',
        txHash: undefined,
        state: 'pending',
        reason,
        proposal,
      });
      logger.warn({ ...data, owner, amountWei: plan.amountWei.toString() }, 'keeper: proposed a top-up to the owner');
      alerts.post('paymaster.keeper.proposed', { ...data, owner, amountWei: plan.amountWei.toString(), ...proposal });
      return done('proposed', { depositWei, markWei });
    }
    const capped =
      plan.cappedBy === undefined
        ? reason
        : `${reason}; capped by the ${plan.cappedBy === 'limit' ? 'daily limit' : "funder's balance"}`;
    if (p.setting.mode === 'dryRun') {
      const said = needs.get(keyOf(p));
      if (said?.has('dry_run') === true) return done('waiting', { depositWei, markWei });
      await ledger.insert({
        ...row,
        funder: deps.funder,
        mode: 'dry_run',
        txHash: undefined,
        state: 'confirmed',
        reason: capped,
        proposal: undefined,
      });
      const call = p.chain.depositCall(plan.amountWei);
      const wouldSend = { to: call.to, value: call.value.toString(), data: call.data };
      oncePerNeed(p, 'dry_run', 'paymaster.keeper.dry_run', {
        ...data,
        amountWei: plan.amountWei.toString(),
        funder: deps.funder ?? null,
        transaction: wouldSend,
      });
      logger.info({ ...data, amountWei: plan.amountWei.toString() }, 'keeper: dry run, would top up the deposit');
      return done('dry_run', { depositWei, markWei });
    }
    return send(p, { ...row, reason: capped }, { depositWei, markWei });
  }

  async function send(
    p: KeptPaymaster,
    row: Omit<DepositTopup, 'updatedAt' | 'funder' | 'mode' | 'txHash' | 'state' | 'proposal'>,
    at: { depositWei: bigint; markWei: bigint },
  ): Promise<KeeperRound> {
    const base = { chainId: row.chainId, paymaster: p.chain.paymaster, ...at };
    let signed: Awaited<ReturnType<KeeperChain['signTopup']>>;
    try {
      signed = await p.chain.signTopup(row.amountWei);
    } catch (err) {
      return failedToSend(p, row, err, base);
    }
    // Recorded before it is broadcast: it counts against the daily limit from now, in every instance.
    const full: DepositTopup = {
      ...row,
      funder: deps.funder,
      mode: 'sent',
      txHash: signed.hash,
      state: 'pending',
      proposal: undefined,
      updatedAt: row.createdAt,
    };
    await ledger.insert(full);
    try {
      await signed.broadcast();
    } catch (err) {
      // Refused by the node (nonce, funds, fee): never sent, so no longer counted.
      await ledger.settle({
        id: row.id,
        state: 'failed',
        reason: `${row.reason}; refused by the node: ${errorText(err)}`,
        now: now(),
      });
      return failedToSend(p, row, err, base, signed.hash);
    }
    logger.info({ ...rowData(full) }, 'keeper: sent a top-up; waiting for its receipt');
    const status = await p.chain.waitForReceipt(signed.hash, deps.receiptTimeoutMs ?? 120_000);
    // Not mined within the wait: the next rounds look it up (and count it meanwhile).
    if (status === undefined) return { ...base, outcome: 'waiting' };
    return { ...base, outcome: await settleSent(p, full, status) };
  }

  function failedToSend(
    p: KeptPaymaster,
    row: { readonly chainId: number; readonly amountWei: bigint; readonly reason: string },
    err: unknown,
    base: Omit<KeeperRound, 'outcome'>,
    txHash?: Hex,
  ): KeeperRound {
    const data = {
      ...base,
      depositWei: base.depositWei?.toString(),
      markWei: base.markWei?.toString(),
      amountWei: row.amountWei.toString(),
      txHash: txHash ?? null,
      failure: 'send_failed',
      error: errorText(err),
    };
    logger.error({ ...data, err }, 'keeper: could not send the top-up');
    oncePerNeed(p, `send_failed:${errorText(err)}`, 'paymaster.keeper.failed', data);
    deps.observer?.onOutcome({ chainId: row.chainId, paymaster: p.chain.paymaster, outcome: 'failed' });
    return { ...base, outcome: 'failed' };
  }

  async function runOnce(): Promise<readonly KeeperRound[]> {
    const results: KeeperRound[] = [];
    for (const p of deps.paymasters) {
      try {
        results.push(await round(p));
      } catch (err) {
        // One paymaster's chain down holds nobody else's round.
        logger.warn({ err, chainId: p.chain.chainId, paymaster: p.chain.paymaster }, 'keeper: the round failed');
        results.push({ chainId: p.chain.chainId, paymaster: p.chain.paymaster, outcome: 'error' });
      }
    }
    return results;
  }

  const loop =
    deps.loop === false || deps.paymasters.length === 0
      ? undefined
      : startPollLoop({
          intervalMs: settings.intervalMs,
          maxBackoffMs: 10 * 60_000,
          firstDelayMs: settings.intervalMs,
          tick: runOnce,
          onError: (err, retryInMs) => logger.warn({ err, retryInMs }, 'keeper: the round failed'),
        });

  return {
    runOnce,
    settled: () => alerts.settled(),
    async close() {
      await loop?.stop();
      await alerts.settled();
    },
  };
}

function rowData(row: DepositTopup) {
  return {
    chainId: row.chainId,
    paymaster: getAddress(row.paymaster),
    entryPoint: getAddress(row.entryPoint),
    amountWei: row.amountWei.toString(),
    funder: row.funder === undefined ? null : getAddress(row.funder),
    txHash: row.txHash ?? null,
    depositWei: row.depositWei.toString(),
    markWei: row.markWei.toString(),
    targetWei: row.targetWei.toString(),
    reason: row.reason,
  };
}

/** A node's or signer's error in one line (viem's short message when there is one), never a stack. */
function errorText(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'shortMessage' in err && typeof err.shortMessage === 'string') {
    return err.shortMessage;
  }
  return err instanceof Error ? (err.message.split('\n')[0] ?? 'error') : String(err);
}
