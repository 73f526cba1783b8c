import { type Address, getAddress } from 'viem';
import { startPollLoop } from '../async/pollLoop.js';
import type { KeeperSettings } from '../config/keeperSettings.js';
import type { AlertSender } from '../solvency/alertWebhook.js';
import type { FollowerLease } from '../store/db/followerLease.js';
import type { DepositTopup, DepositTopupRepository } from '../store/ledger/depositTopupRepository.js';
import { createFunderWatch } from './funderWatch.js';
import { createKeeperAlerts } from './keeperAlerts.js';
import { keeperMark, topupPlan } from './keeperMark.js';
import { createKeeperNeeds, type KeeperNeeds, keeperKey } from './keeperNeeds.js';
import {
  type KeeperObserver,
  type KeeperOutcome,
  type KeeperRound,
  type KeptPaymaster,
  roundResult,
} from './keeperRound.js';
import { makeTopup } from './makeTopup.js';
import { reconcileTopups } from './reconcileTopups.js';
import { refuseTopup } from './refuseTopup.js';
import type { SendTopupDeps } from './sendTopup.js';

/**
 * The deposit keeper (src/keeper/README.md, docs/guides/operations.md "Deposit keeper"): every interval, per opted-in
 * paymaster, the instance holding its lease reads the deposit; under the mark it tops it up to the target with the
 * EntryPoint's depositTo from the funding key, capped by the daily limit's remainder (summed from the ledger) and by
 * the funder's balance beyond a reserve for gas, waits for the receipt and records it. A dry run records what it would
 * send; proposal mode records the Safe transaction for the owner to sign, once per need.
 */
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

export function startDepositKeeper(deps: DepositKeeperDeps): DepositKeeper {
  const { settings, logger } = deps;
  const alerts = createKeeperAlerts({ sender: deps.alert, logger });
  // What every step of a round is handed (each takes the part it needs).
  const tools: RoundDeps = {
    ledger: deps.ledger,
    lease: deps.lease,
    settings,
    logger,
    now: deps.now,
    alerts,
    needs: createKeeperNeeds({ alerts }),
    observer: deps.observer,
    funder: deps.funder,
    receiptTimeoutMs: deps.receiptTimeoutMs ?? 120_000,
    watchFunder: createFunderWatch({ ...deps, alerts, observer: deps.observer }),
  };

  async function runOnce(): Promise<readonly KeeperRound[]> {
    const results: KeeperRound[] = [];
    for (const p of deps.paymasters) {
      try {
        results.push(await keeperRound({ ...tools, p }));
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

/** What a round is handed: the keeper's parts, each step taking the part it needs. */
interface RoundDeps extends SendTopupDeps {
  readonly ledger: DepositTopupRepository;
  readonly lease: FollowerLease;
  readonly settings: Pick<KeeperSettings, 'gasReserveWei'>;
  readonly needs: KeeperNeeds;
  readonly logger: DepositKeeperDeps['logger'];
  readonly watchFunder: ReturnType<typeof createFunderWatch>;
}

/**
 * One paymaster's round: closes what earlier rounds left pending, reads the deposit, the mark and the funder; at the
 * mark the need ends, below it (nothing in flight, no open proposal) the plan is refused or made.
 */
async function keeperRound(args: RoundDeps & { readonly p: KeptPaymaster }): Promise<KeeperRound> {
  const { p, ledger, now } = args;
  const { chainId, paymaster } = p.chain;
  const done = (outcome: KeeperOutcome, at?: TopupFigures) => roundResult({ p, outcome, at, observer: args.observer });
  if (!(await args.lease.hold(keeperKey(p)))) return done('standby');
  const pending = await ledger.pending({ chainId, paymaster });
  const inFlight = await reconcileTopups({ ...args, pending });
  const depositWei = await p.chain.readDeposit();
  const markWei = markFor(p);
  const at = { depositWei, markWei };
  const proposals = pending.filter((r) => r.mode === 'proposed');
  const balanceWei = p.setting.mode === 'propose' ? undefined : await p.chain.readFunderBalance();
  if (balanceWei !== undefined) args.watchFunder({ p, balanceWei, markWei });
  if (depositWei >= markWei) {
    await endNeed({ ...args, proposals });
    return done('ok', at);
  }
  if (inFlight || proposals.length > 0) return done('waiting', at);
  const spentWei = await ledger.sentSince({ chainId, paymaster, since: now() - DAY_MS });
  const plan = topupPlan({
    depositWei,
    markWei,
    targetWei: p.setting.targetWei,
    limitLeftWei: p.setting.dailyLimitWei - spentWei,
    spendableWei: balanceWei === undefined ? undefined : balanceWei - args.settings.gasReserveWei,
  });
  const data = { ...figures({ p, at }), sentTodayWei: spentWei.toString() };
  if (plan.kind === 'none') return done('ok', at);
  if (plan.kind === 'refused') return done(refuseTopup({ ...args, plan, data, balanceWei }), at);
  return makeTopup({ ...args, plan, data, at });
}

interface TopupFigures {
  readonly depositWei: bigint;
  readonly markWei: bigint;
}

/** The paymaster's mark from the guard's live figures, its own settings overriding the guard's floor and margin. */
function markFor(p: KeptPaymaster): bigint {
  const s = p.solvency();
  return keeperMark({
    liabilitiesWei: s.liabilitiesWei,
    marginBps: p.setting.marginBps ?? s.marginBps,
    floorWei: p.setting.floorWei ?? s.floorWei,
    spendWeiPerHour: s.spendWeiPerHour,
    leadTimeSeconds: p.setting.leadTimeSeconds,
    minimumWei: p.setting.minimumWei,
  });
}

/** The deposit is back at the mark: its proposal met (by whoever sent it), and what was said of it may be said again. */
async function endNeed(args: {
  readonly p: KeptPaymaster;
  readonly proposals: readonly DepositTopup[];
  readonly ledger: Pick<DepositTopupRepository, 'settle'>;
  readonly needs: Pick<KeeperNeeds, 'end'>;
  readonly now: () => number;
}): Promise<void> {
  for (const r of args.proposals) {
    await args.ledger.settle({
      id: r.id,
      state: 'confirmed',
      reason: `${r.reason}; the deposit is back at the mark`,
      now: args.now(),
    });
  }
  args.needs.end(args.p);
}

/** The round's figures, as every log line and alert of it shows them. */
function figures({ p, at }: { readonly p: KeptPaymaster; readonly at: TopupFigures }) {
  return {
    chainId: p.chain.chainId,
    paymaster: getAddress(p.chain.paymaster),
    entryPoint: getAddress(p.chain.entryPoint),
    mode: p.setting.mode,
    depositWei: at.depositWei.toString(),
    markWei: at.markWei.toString(),
    targetWei: p.setting.targetWei.toString(),
    dailyLimitWei: p.setting.dailyLimitWei.toString(),
  };
}
