import { type Address, getAddress } from 'viem';
import { floorFor, lowWaterFor, type SolvencySettings } from '../config/solvencySettings.js';
import { PaymasterInsolventError, UnavailableError } from '../errors/PatronError.js';
import type { DepositSpendRepository } from '../store/ledger/depositSpendRepository.js';
import type { SolvencyClaims } from '../store/ledger/solvencyClaims.js';
import { type AlertLevel, type AlertState, CALM } from './alertHysteresis.js';
import type { AlertSender } from './alertWebhook.js';
import { createDepositSpendRate } from './depositSpendRate.js';
import { type ChainHead, createLiabilityTracker, type SignedOp } from './liabilityTracker.js';
import { type PaymasterKey, paymasterKey } from './paymasterKey.js';
import { createSolvencyAlerts } from './solvencyAlerts.js';
import { floorRunwaySeconds, headroomWei, type SolvencyVerdict, solvencyVerdict } from './solvencyVerdict.js';

/**
 * The solvency guard (src/solvency/README.md): per paymaster (one per chain and EntryPoint), a background loop reads the paymaster's EntryPoint
 * deposit and holds signing while it is below the floor or below the live liabilities × margin. The request path
 * only calls `assertCanSign`, an O(1) check against the last deposit read and the running liabilities. State
 * changes are logged once and posted to the operator alert webhook, in the background.
 */
export interface SolvencyChain {
  readonly chainId: number;
  readonly paymaster: Address;
  /** The paymaster's EntryPoint deposit (balanceOf); may reject, the guard keeps the last value then. */
  readonly readDeposit: () => Promise<bigint>;
  /**
   * Whether the paymaster is staked in the EntryPoint (getDepositInfo's `staked`), read with the deposit; may
   * reject (the last value stands). The token mode needs a staked paymaster on a real chain (ERC-7562).
   */
  readonly readStaked?: () => Promise<boolean>;
  /**
   * The chain's latest block as the service already reads it (the fee oracle's), by which a signature's
   * liability ends (liabilityTracker.ts); undefined or a rejection keep the last one.
   */
  readonly readHead?: () => Promise<ChainHead | undefined>;
}

export interface ChainSolvency {
  readonly chainId: number;
  readonly paymaster: Address;
  /** Undefined until the first read succeeded. */
  readonly depositWei: bigint | undefined;
  readonly liabilitiesWei: bigint;
  readonly floorWei: bigint;
  /** Basis points (15000: × 1.5). */
  readonly marginBps: bigint;
  readonly requiredWei: bigint;
  /** False while the guard holds signing (always true when the guard does not enforce). */
  readonly signing: boolean;
  /**
   * What included ops took from the deposit over the last 24 h, per hour (depositSpendRate.ts: from the ledger, the
   * same in every instance and across restarts; withdrawals and top-ups are not spend); undefined without spend.
   */
  readonly spendWeiPerHour: bigint | undefined;
  /**
   * The runway: seconds until the headroom (deposit − liabilities × margin) reaches the floor, where signing stops,
   * at that rate; 0 when it is there; undefined without spend. The one runway figure (dashboard, metrics, alerts).
   */
  readonly runwaySeconds: number | undefined;
  /** Below this (deposit − liabilities × margin) the guard warns: `low` alert, dashboard warning. Above the floor. */
  readonly lowWaterWei: bigint;
  /** deposit − liabilities × margin (0 at most), undefined until the first read. */
  readonly headroomWei: bigint | undefined;
  /** The operator alerts' level, with hysteresis (alertHysteresis.ts): `low` from the low-water mark down. */
  readonly alertLevel: AlertLevel;
  /** Unix ms of the last successful deposit read. */
  readonly checkedAt: number | undefined;
  /** Whether the paymaster is staked, as last read (undefined: not read, or not asked). */
  readonly staked: boolean | undefined;
}

export interface SolvencyGuard {
  /** Throws PaymasterInsolventError while the paymaster is held: the early check, before any work for a request. */
  assertCanSign(paymaster: { readonly chainId: number; readonly paymaster: Address }): void;
  /**
   * The check and the record in one synchronous step, as a signature is issued: throws PaymasterInsolventError
   * when the liabilities with this op's worst case would not be covered, else counts it. Checking first and
   * recording after the request's awaits let concurrent requests all pass on the same figure (20 signed where
   * 3 were covered).
   */
  admitSignature(op: SignedOp): void;
  /**
   * Several instances on one PostgreSQL (`claims`): makes sure this instance's claim on the deposit covers its
   * liabilities with this op and outlives its window, claiming more if the others leave room; `admitSignature` then
   * refuses an op its claim does not cover. Nothing to do for a single instance.
   */
  ensureHeadroom(op: SignedOp): Promise<void>;
  /** The paymaster's stake as last read (undefined until read, or for a paymaster the guard does not follow). */
  staked(paymaster: { readonly chainId: number; readonly paymaster: Address }): boolean | undefined;
  /** Per paymaster, for the dashboard and /metrics. */
  state(): readonly ChainSolvency[];
  /**
   * Settlement's observer of an included op of the paymaster, once its ledger row is closed: off the liabilities, and
   * into the spend rate at once (the next read of the ledger, which holds it, replaces the figure).
   */
  observeIncluded(args: {
    readonly chainId: number;
    readonly paymaster: Address;
    /** The event's sender and nonce: the op's liability is kept under them, however it was signed. */
    readonly sender: Address;
    readonly nonce: bigint;
    readonly actualGasCost: bigint;
  }): void;
  /** Reads every deposit now and re-evaluates (the loop does this every interval; tests call it). */
  checkNow(): Promise<readonly ChainSolvency[]>;
  close(): Promise<void>;
}

export interface SolvencyGuardDeps {
  readonly chains: readonly SolvencyChain[];
  readonly settings: SolvencySettings;
  /** False: read and report only (the metrics want the deposit even with PATRON_SOLVENCY=false). */
  readonly enforce: boolean;
  readonly alert: AlertSender | undefined;
  readonly logger: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  readonly now: () => number;
  /** Per-read budget. */
  readonly readTimeoutMs?: number;
  /**
   * Several instances on one PostgreSQL: the shares of each deposit (store/ledger/solvencyClaims.ts), so that the instances
   * together never promise more than the deposit covers. Undefined: this process is the only one that signs.
   */
  readonly claims?: SolvencyClaims | undefined;
  /**
   * The longest a signature can stay includable after it is issued (the longest window Patron signs, plus skew):
   * a claim is renewed to outlive by this every signature made under it.
   */
  readonly claimWindowSeconds?: number;
  /** The ledger's deposit spend (the spend rate and runway); undefined: no rate, no runway. */
  readonly spend?: DepositSpendRepository | undefined;
}

/** A claim asks for this share of what the deposit covers beyond what it needs now, so a burst claims once. */
const CLAIM_CHUNK_DIVISOR = 8n;

/** The chain's head within `timeoutMs`, or undefined (the last one stands). */
async function readHead(chain: SolvencyChain, timeoutMs: number): Promise<ChainHead | undefined> {
  if (chain.readHead === undefined) return undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      chain.readHead().catch(() => undefined),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

interface ChainState {
  readonly chain: SolvencyChain;
  readonly floorWei: bigint;
  readonly lowWaterWei: bigint;
  /** The operator alerts' state (alertHysteresis.ts), apart from `signing`: signing resumes at once, alerts do not. */
  alert: AlertState;
  depositWei: bigint | undefined;
  checkedAt: number | undefined;
  staked: boolean | undefined;
  signing: boolean;
  readFailing: boolean;
  head: ChainHead | undefined;
  /** With claims: this instance's share of the deposit, and until when (unix seconds) it holds. */
  claimedWei: bigint;
  claimExpiresAt: number;
  claiming: Promise<void> | undefined;
  /** With claims: the worst cases of ops between ensureHeadroom and admitSignature. */
  waitingWei: bigint;
}

export function startSolvencyGuard(deps: SolvencyGuardDeps): SolvencyGuard {
  const { settings, logger } = deps;
  const liabilities = createLiabilityTracker({ now: deps.now, maxExact: settings.trackedSignatures });
  const spend = deps.spend === undefined ? undefined : createDepositSpendRate({ source: deps.spend, now: deps.now });
  /** Whether the last spend read failed: logged once per failing streak. */
  let spendFailing = false;
  const states = new Map<PaymasterKey, ChainState>(
    deps.chains.map((chain) => [
      paymasterKey(chain),
      {
        chain,
        floorWei: floorFor(settings, chain.chainId),
        lowWaterWei: lowWaterFor(settings, chain.chainId),
        alert: CALM,
        depositWei: undefined,
        checkedAt: undefined,
        staked: undefined,
        // Unknown is not insolvent: until the first read, signing goes on (a chain that cannot be read cannot
        // have its fees read either, and that refuses on its own).
        signing: true,
        readFailing: false,
        head: undefined,
        claimedWei: 0n,
        claimExpiresAt: 0,
        claiming: undefined,
        waitingWei: 0n,
      },
    ]),
  );
  const rateOf = (s: { readonly chain: { readonly chainId: number; readonly paymaster: Address } }) =>
    spend?.weiPerHour(s.chain);
  const alerts = createSolvencyAlerts({ settings, sender: deps.alert, logger, now: deps.now, spendWeiPerHour: rateOf });

  /** Logged at every change of the verdict: what the guard does (the alerts have their own hysteresis). */
  function transition(s: ChainState, liabilitiesWei: bigint, verdict: SolvencyVerdict): void {
    if (s.signing === verdict.signing) return;
    s.signing = verdict.signing;
    const data = alerts.figures(s, liabilitiesWei, verdict);
    if (s.signing) logger.info(data, 'solvency: the paymaster deposit covers its liabilities again; signing resumed');
    else logger.error(data, 'solvency: paymaster deposit too low; signing stopped on this chain until topped up');
  }

  /** Evaluates one chain against `liabilitiesWei`; flips the state (log) and moves the alerts when it changed. */
  function evaluate(s: ChainState, liabilitiesWei: bigint): boolean {
    if (!deps.enforce || s.depositWei === undefined) return true;
    const verdict = solvencyVerdict({
      depositWei: s.depositWei,
      liabilitiesWei,
      floorWei: s.floorWei,
      marginBps: settings.marginBps,
    });
    transition(s, liabilitiesWei, verdict);
    alerts.onVerdict(s, liabilitiesWei, verdict);
    return verdict.signing;
  }

  function view(s: ChainState): ChainSolvency {
    const liabilitiesWei = liabilities.current(paymasterKey(s.chain));
    const rate = rateOf(s);
    const { requiredWei } = solvencyVerdict({
      depositWei: 0n,
      liabilitiesWei,
      floorWei: 0n,
      marginBps: settings.marginBps,
    });
    const headroom = s.depositWei === undefined ? undefined : headroomWei({ depositWei: s.depositWei, requiredWei });
    return {
      chainId: s.chain.chainId,
      paymaster: s.chain.paymaster,
      depositWei: s.depositWei,
      liabilitiesWei,
      floorWei: s.floorWei,
      marginBps: settings.marginBps,
      requiredWei,
      signing: s.signing,
      spendWeiPerHour: rate,
      runwaySeconds:
        headroom === undefined
          ? undefined
          : floorRunwaySeconds({ headroomWei: headroom, floorWei: s.floorWei, weiPerHour: rate }),
      lowWaterWei: s.lowWaterWei,
      headroomWei: headroom,
      alertLevel: s.alert.level,
      checkedAt: s.checkedAt,
      staked: s.staked,
    };
  }

  /** The spend rate from the ledger, before the verdict (its alert carries the runway). */
  async function refreshSpend(s: ChainState): Promise<void> {
    if (spend === undefined) return;
    try {
      await spend.refresh(s.chain);
      if (spendFailing) logger.info({ chainId: s.chain.chainId }, 'solvency: the spend rate is readable again');
      spendFailing = false;
    } catch (err) {
      // The last rate stands (a storage fault is reported by the store's own health).
      if (!spendFailing) logger.warn({ err, chainId: s.chain.chainId }, 'solvency: could not read the spend rate');
      spendFailing = true;
    }
  }

  async function checkChain(s: ChainState): Promise<void> {
    const timeoutMs = deps.readTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    // The stake beside the deposit, in the same cycle; a failed read keeps the last value.
    const stake = s.chain.readStaked?.().then(
      (staked) => {
        s.staked = staked;
      },
      () => undefined,
    );
    try {
      s.depositWei = await Promise.race([
        s.chain.readDeposit(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      s.checkedAt = deps.now();
      if (s.readFailing) logger.info({ chainId: s.chain.chainId }, 'solvency: the paymaster deposit is readable again');
      s.readFailing = false;
    } catch (err) {
      // The last deposit read stands; logged once per failing streak, not every interval.
      if (!s.readFailing)
        logger.warn({ err, chainId: s.chain.chainId }, 'solvency: could not read the paymaster deposit');
      s.readFailing = true;
    } finally {
      clearTimeout(timer);
    }
    if (stake !== undefined) {
      let stakeTimer: NodeJS.Timeout | undefined;
      await Promise.race([stake, new Promise<void>((done) => (stakeTimer = setTimeout(done, timeoutMs)))]);
      clearTimeout(stakeTimer);
    }
    s.head = (await readHead(s.chain, timeoutMs)) ?? s.head;
    await refreshSpend(s);
    const key = paymasterKey(s.chain);
    const total = liabilities.total(key, s.head);
    evaluate(s, total);
    // With claims: renew the claim's life while the instance promises anything, and give back what it no longer
    // needs (down to its liabilities and a chunk); a failure keeps the claim as it is (it only ever errs high).
    if (deps.claims !== undefined && (s.claimedWei > 0n || total > 0n)) {
      // What requests already waiting for headroom were counted on stays claimed.
      s.claiming ??= claimFor(s, key, total + s.waitingWei)
        .catch((err: unknown) => logger.warn({ err, chainId: s.chain.chainId }, 'solvency: could not renew the claim'))
        .finally(() => {
          s.claiming = undefined;
        });
      await s.claiming;
    }
  }

  let running: Promise<readonly ChainSolvency[]> | undefined;
  async function checkNow(): Promise<readonly ChainSolvency[]> {
    // One check at a time; a caller during a check waits for the next full one.
    while (running !== undefined) await running.catch(() => undefined);
    running = Promise.all([...states.values()].map(checkChain)).then(() => [...states.values()].map(view));
    try {
      return await running;
    } finally {
      running = undefined;
    }
  }

  /** Throws while the paymaster's deposit does not cover `liabilitiesWei` (one the guard does not follow passes). */
  const assertCovered = (key: PaymasterKey, liabilitiesWei: bigint): void => {
    const s = states.get(key);
    if (s === undefined || evaluate(s, liabilitiesWei)) return;
    throw new PaymasterInsolventError({
      chainId: s.chain.chainId,
      depositWei: s.depositWei ?? 0n,
      liabilitiesWei,
      floorWei: s.floorWei,
      marginBps: settings.marginBps,
    });
  };

  /** What the whole deposit covers: deposit / margin, 0 below the floor; undefined before the first read. */
  const limitOf = (s: ChainState): bigint | undefined => {
    if (s.depositWei === undefined) return undefined;
    if (s.depositWei < s.floorWei) return 0n;
    return (s.depositWei * 10_000n) / settings.marginBps;
  };
  const claimWindow = deps.claimWindowSeconds ?? 3600;
  // Renewed by every check; the life covers two checks on top of the window, so one late check changes nothing.
  const claimLife = claimWindow + Math.ceil((2 * settings.intervalMs) / 1000);
  /** Claims `need` plus a chunk (or what is left), renewing the claim's life. */
  const claimFor = async (s: ChainState, key: PaymasterKey, need: bigint): Promise<void> => {
    const limit = limitOf(s);
    if (deps.claims === undefined || limit === undefined) return;
    const nowSeconds = Math.floor(deps.now() / 1000);
    const expiresAt = nowSeconds + claimLife;
    s.claimedWei = await deps.claims.claim({
      key,
      wantWei: need + limit / CLAIM_CHUNK_DIVISOR,
      atLeastWei: liabilities.current(key),
      limitWei: limit,
      expiresAt,
      nowSeconds,
    });
    s.claimExpiresAt = expiresAt;
  };
  const waiting = new WeakSet<SignedOp>();
  const unwait = (s: ChainState, op: SignedOp): void => {
    if (!waiting.delete(op)) return;
    s.waitingWei -= op.worstCaseWei;
  };
  /**
   * Whether this instance's claim covers `liabilitiesWei` and outlives a signature issued now (always, without
   * claims). In the server's time: a window in the chain's time (validityWindows.ts) is no longer than the longest
   * window, whatever the chain's clock says.
   */
  const claimCovers = (s: ChainState, liabilitiesWei: bigint): boolean =>
    deps.claims === undefined ||
    !deps.enforce ||
    s.depositWei === undefined ||
    (liabilitiesWei <= s.claimedWei && Math.floor(deps.now() / 1000) + claimWindow <= s.claimExpiresAt);

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const loop = () => {
    timer = setTimeout(() => {
      void checkNow().finally(() => {
        if (!stopped) loop();
      });
    }, settings.intervalMs);
    timer.unref();
  };
  const first = checkNow().finally(() => {
    if (!stopped) loop();
  });

  return {
    assertCanSign(paymaster) {
      const key = paymasterKey(paymaster);
      assertCovered(key, liabilities.current(key));
    },
    admitSignature(op) {
      const key = paymasterKey(op);
      const s = states.get(key);
      if (s !== undefined) unwait(s, op);
      const after = liabilities.current(key) + op.worstCaseWei;
      assertCovered(key, after);
      if (s !== undefined && !claimCovers(s, after)) {
        // The other instances' claims hold the rest of what the deposit covers: counted at their claims.
        const limit = limitOf(s) ?? 0n;
        const others = limit > s.claimedWei ? limit - s.claimedWei : 0n;
        throw new PaymasterInsolventError({
          chainId: s.chain.chainId,
          depositWei: s.depositWei ?? 0n,
          liabilitiesWei: others + after,
          floorWei: s.floorWei,
          marginBps: settings.marginBps,
        });
      }
      liabilities.record(op);
    },
    async ensureHeadroom(op) {
      const key = paymasterKey(op);
      const s = states.get(key);
      if (s === undefined || deps.claims === undefined) return;
      // A claim is a share of a deposit someone has read: until then a single instance signs on (it cannot promise
      // more than it signs, and its fees need the chain too), but N instances signing blind could promise N times
      // the deposit. So the first read, when still under way, is waited for (it has its time budget), and a deposit
      // no read has seen refuses as a transient error the client retries.
      if (deps.enforce && s.depositWei === undefined) {
        await first.catch(() => undefined);
        if (s.depositWei === undefined) {
          throw new UnavailableError(
            `the deposit of the paymaster ${getAddress(s.chain.paymaster)} on chain ${s.chain.chainId} has not been read yet; retry`,
          );
        }
      }
      // Counted as wanted until admitted (admitSignature), so that a burst claims for all of it at once.
      s.waitingWei += op.worstCaseWei;
      waiting.add(op);
      try {
        for (;;) {
          // Covered once the claim holds everything waiting with it (which of them is admitted first is not known).
          if (claimCovers(s, liabilities.current(key) + s.waitingWei)) return;
          const before = { wei: s.claimedWei, until: s.claimExpiresAt };
          s.claiming ??= claimFor(s, key, liabilities.current(key) + s.waitingWei).finally(() => {
            s.claiming = undefined;
          });
          await s.claiming;
          // No more room: admitSignature refuses the op.
          if (s.claimedWei <= before.wei && s.claimExpiresAt <= before.until) return;
        }
      } catch (err) {
        unwait(s, op);
        throw err;
      }
    },
    staked: (paymaster) => states.get(paymasterKey(paymaster))?.staked,
    state: () => [...states.values()].map(view),
    observeIncluded({ chainId, paymaster, sender, nonce, actualGasCost }) {
      liabilities.included(paymasterKey({ chainId, paymaster }), sender, nonce);
      spend?.included({ chainId, paymaster, wei: actualGasCost });
    },
    checkNow,
    async close() {
      stopped = true;
      clearTimeout(timer);
      await first.catch(() => undefined);
      clearTimeout(timer);
      deps.alert?.close();
      await alerts.settled();
    },
  };
}
