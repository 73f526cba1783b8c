import { type Address, formatUnits } from 'viem';
import { startPollLoop } from '../async/pollLoop.js';
import type { MeeTankSettings } from '../config/meeTankSettings.js';
import { type AlertState, CALM, nextAlert } from '../solvency/alertHysteresis.js';
import type { AlertMessage } from '../solvency/alertWebhook.js';

/**
 * The gas tanks' balances and low-balance alerts (docs/guides/operations.md, "MEE gas tanks"): every
 * PATRON_MEE_TANK_CHECK_SECONDS each active tank's token balance is read from its chain, its runway worked out from
 * its spend of the last 24 h, and its alert moved through the deposit's hysteresis (solvency/alertHysteresis.ts): a
 * tank under its low-balance threshold, or whose runway is under PATRON_MEE_TANK_RUNWAY_FLOOR_SECONDS, posts one
 * `mee.tank.low` operator alert; it is re-armed (a silent `mee.tank.ok`, which ends Alertmanager's alert and
 * PagerDuty's incident) once the balance has stayed 10 % over the mark for PATRON_SOLVENCY_ALERT_HOLD_SECONDS. The
 * metrics read the last figures at scrape time (`patron_mee_tank_*`). No tank: nothing is read.
 */

/** What the watch needs of a tank (the tanks repository's MeeTank has it all). */
export interface MeeTankLike {
  readonly id: string;
  readonly dappId: string;
  readonly chainId: number;
  /** The tank (a Nexus account): the holder whose balance is read. */
  readonly address: Address;
  readonly token: Address;
  readonly tokenDecimals: number;
  /** Only 'active' tanks are read; a retired tank signs nothing more, so its balance warns no one. */
  readonly status: string;
  /** The alert threshold in token base units; undefined: the runway alone. */
  readonly lowBalance: bigint | undefined;
}

/** A tank's figures as last read. */
export interface TankBalanceState {
  readonly tankId: string;
  readonly dappId: string;
  readonly chainId: number;
  readonly tank: Address;
  readonly token: Address;
  readonly tokenDecimals: number;
  /** Token base units. */
  readonly balance: bigint;
  readonly lowBalance: bigint | undefined;
  /** What the tank paid over the last 24 h, token base units; undefined: unknown or nothing. */
  readonly spend24h: bigint | undefined;
  /** balance ÷ (spend24h per second); undefined without spend. */
  readonly runwaySeconds: number | undefined;
  /** The alert's level, with its hysteresis: true from the mark down until the balance stayed clear of it. */
  readonly low: boolean;
}

export interface TankWatch {
  state(): readonly TankBalanceState[];
  /** One round now (tests; the loop runs its own). */
  runOnce(): Promise<void>;
  close(): Promise<void>;
}

export interface TankWatchDeps {
  /** Every tank Patron holds (store.meeTanks.list()); an empty list reads nothing. */
  listTanks(): Promise<readonly MeeTankLike[]>;
  /** The holder's balance of the token on the chain; undefined when Patron serves no such chain. */
  readBalance(args: { chainId: number; token: Address; holder: Address }): Promise<bigint | undefined>;
  /** What the tank paid over the last 24 h, in token base units; undefined: nothing known. */
  tankSpend24h(tankId: string): Promise<bigint | undefined>;
  readonly settings: MeeTankSettings & { readonly alertHoldMs: number };
  /** The operator alerts' sender (solvency/alerts/), undefined when no destination is set. */
  readonly alert: { send(message: AlertMessage): Promise<boolean> } | undefined;
  readonly logger: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  readonly now: () => number;
}

const DAY_SECONDS = 86_400n;

interface Tracked {
  figures: TankBalanceState | undefined;
  alert: AlertState;
}

/** The balance under which the tank is low: its own threshold, or what lasts the runway floor at its spend. */
export function tankLowMark(args: {
  readonly lowBalance: bigint | undefined;
  readonly spend24h: bigint | undefined;
  readonly runwayFloorSeconds: number;
}): bigint {
  const threshold = args.lowBalance ?? 0n;
  const spend = args.spend24h ?? 0n;
  if (spend <= 0n || args.runwayFloorSeconds <= 0) return threshold;
  // balance < ⌈spend × floor ÷ day⌉ exactly when balance ÷ (spend ÷ day) < floor.
  const forRunway = (spend * BigInt(args.runwayFloorSeconds) + DAY_SECONDS - 1n) / DAY_SECONDS;
  return forRunway > threshold ? forRunway : threshold;
}

export function startTankWatch(deps: TankWatchDeps): TankWatch {
  const tracked = new Map<string, Tracked>();
  const unserved = new Set<string>();
  const { settings } = deps;
  const post = (message: AlertMessage) => {
    // The sender never rejects (alertWebhook.ts); a posting fault is its own to log.
    void deps.alert?.send(message);
  };

  function alertData(s: TankBalanceState, mark: bigint) {
    const amount = (v: bigint | undefined) => (v === undefined ? null : v.toString());
    const whole = (v: bigint) => formatUnits(v, s.tokenDecimals);
    const under = s.lowBalance !== undefined && s.balance < s.lowBalance ? 'threshold' : 'runway';
    return {
      chainId: s.chainId,
      tank: s.tank,
      tankId: s.tankId,
      dappId: s.dappId,
      token: s.token,
      tokenDecimals: s.tokenDecimals,
      balance: amount(s.balance),
      lowBalance: amount(s.lowBalance),
      spend24h: amount(s.spend24h),
      runwaySeconds: s.runwaySeconds ?? null,
      runwayFloorSeconds: settings.runwayFloorSeconds,
      markBalance: mark.toString(),
      reason: under,
      summary: `Gas tank ${s.tank} on chain ${s.chainId} (dApp ${s.dappId}) is low: ${whole(s.balance)} of token ${s.token}, under ${under === 'threshold' ? `its threshold ${whole(s.lowBalance ?? 0n)}` : `a runway of ${settings.runwayFloorSeconds} s at its last 24 h's spend`}; fund it before the MEE quotes it pays for fail`,
    };
  }

  async function readTank(tank: MeeTankLike): Promise<void> {
    const balance = await deps.readBalance({ chainId: tank.chainId, token: tank.token, holder: tank.address });
    if (balance === undefined) {
      // Said once per tank: the operator created it on a chain this process does not serve (PATRON_CHAINS).
      if (!unserved.has(tank.id))
        deps.logger.warn(
          { tankId: tank.id, chainId: tank.chainId },
          'MEE gas tank on a chain Patron does not serve: its balance is not read',
        );
      unserved.add(tank.id);
      return;
    }
    unserved.delete(tank.id);
    const spend24h = await deps.tankSpend24h(tank.id);
    const runwaySeconds =
      spend24h !== undefined && spend24h > 0n ? Number((balance * DAY_SECONDS) / spend24h) : undefined;
    const mark = tankLowMark({
      lowBalance: tank.lowBalance,
      spend24h,
      runwayFloorSeconds: settings.runwayFloorSeconds,
    });
    const t = tracked.get(tank.id) ?? { figures: undefined, alert: CALM };
    tracked.set(tank.id, t);
    // A tank never halts: the hysteresis's `signing` is always true, its headroom the balance, its mark the above.
    const next = nextAlert({
      state: t.alert,
      signing: true,
      headroomWei: balance,
      lowWaterWei: mark,
      now: deps.now(),
      holdMs: settings.alertHoldMs,
    });
    const before = t.alert.level;
    t.alert = next.state;
    const figures: TankBalanceState = {
      tankId: tank.id,
      dappId: tank.dappId,
      chainId: tank.chainId,
      tank: tank.address,
      token: tank.token,
      tokenDecimals: tank.tokenDecimals,
      balance,
      lowBalance: tank.lowBalance,
      spend24h,
      runwaySeconds,
      low: next.state.level !== 'ok',
    };
    t.figures = figures;
    if (next.post === 'low') {
      const data = alertData(figures, mark);
      deps.logger.warn(data, 'MEE gas tank low: fund it before the quotes it pays for fail');
      post({ type: 'mee.tank.low', data });
    } else if (before !== 'ok' && next.state.level === 'ok') {
      post({ type: 'mee.tank.ok', data: alertData(figures, mark), silent: true });
    }
  }

  async function round(): Promise<void> {
    const tanks = (await deps.listTanks()).filter((t) => t.status === 'active');
    const ids = new Set(tanks.map((t) => t.id));
    for (const [id, t] of tracked) {
      if (ids.has(id)) continue;
      tracked.delete(id);
      // Retired or deleted while low: its alert ends (Alertmanager, PagerDuty) rather than firing on for a day.
      if (t.alert.level !== 'ok' && t.figures !== undefined) {
        const mark = t.figures.lowBalance ?? 0n;
        post({ type: 'mee.tank.ok', data: { ...alertData(t.figures, mark), reason: 'retired' }, silent: true });
      }
    }
    const reads = await Promise.allSettled(tanks.map(readTank));
    reads.forEach((r, i) => {
      // One tank's chain down keeps its last figures; the others are read all the same.
      if (r.status === 'rejected') {
        deps.logger.warn({ err: r.reason, tankId: tanks[i]?.id }, 'could not read an MEE gas tank balance');
      }
    });
  }

  const loop = startPollLoop({
    intervalMs: settings.checkMs,
    maxBackoffMs: Math.max(settings.checkMs, 10 * 60_000),
    firstDelayMs: 0,
    tick: round,
    onError: (err, retryInMs) => deps.logger.error({ err, retryInMs }, 'could not list the MEE gas tanks'),
  });
  return {
    state: () => [...tracked.values()].flatMap((t) => (t.figures === undefined ? [] : [t.figures])),
    runOnce: () => loop.runNow(),
    close: () => loop.stop(),
  };
}
