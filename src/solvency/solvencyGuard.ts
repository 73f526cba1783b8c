import type { Address } from 'viem';
import type { SolvencySettings } from '../config/solvencySettings.js';
import { PaymasterInsolventError } from '../errors/PatronError.js';
import type { AlertSender } from './alertWebhook.js';
import { type ChainHead, createLiabilityTracker, type SignedOp } from './liabilityTracker.js';
import { type PaymasterKey, paymasterKey } from './paymasterKey.js';
import { runwaySeconds, solvencyVerdict } from './solvencyVerdict.js';
import { createSpendWindow } from './spendWindow.js';

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
  /** Included spend over the last 24 h, per second, when any. */
  readonly spendWeiPerSecond: number | undefined;
  readonly runwaySeconds: number | undefined;
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
  /** The paymaster's stake as last read (undefined until read, or for a paymaster the guard does not follow). */
  staked(paymaster: { readonly chainId: number; readonly paymaster: Address }): boolean | undefined;
  /** Per paymaster, for the dashboard and /metrics. */
  state(): readonly ChainSolvency[];
  /** Settlement's observer of an included op of the paymaster: off the liabilities, into the spend rate. */
  observeIncluded(args: {
    readonly chainId: number;
    readonly paymaster: Address;
    readonly userOpHash: string;
    /** The op's key when it was signed before its gas was final (chain/opKey.ts): its liability is under that. */
    readonly opKey?: string;
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
}

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

/** Recently included ops remembered against replays. */
const SEEN_INCLUSIONS = 10_000;

interface ChainState {
  readonly chain: SolvencyChain;
  readonly floorWei: bigint;
  depositWei: bigint | undefined;
  checkedAt: number | undefined;
  staked: boolean | undefined;
  signing: boolean;
  readFailing: boolean;
  head: ChainHead | undefined;
}

export function startSolvencyGuard(deps: SolvencyGuardDeps): SolvencyGuard {
  const { settings, logger } = deps;
  const liabilities = createLiabilityTracker({ now: deps.now });
  const spend = createSpendWindow({ now: deps.now });
  const states = new Map<PaymasterKey, ChainState>(
    deps.chains.map((chain) => [
      paymasterKey(chain),
      {
        chain,
        floorWei: settings.floorWeiByChain.get(chain.chainId) ?? settings.floorWei,
        depositWei: undefined,
        checkedAt: undefined,
        staked: undefined,
        // Unknown is not insolvent: until the first read, signing goes on (a chain that cannot be read cannot
        // have its fees read either, and that refuses on its own).
        signing: true,
        readFailing: false,
        head: undefined,
      },
    ]),
  );
  const pendingAlerts = new Set<Promise<boolean>>();
  const included = new Set<string>();

  function transition(s: ChainState, signing: boolean, liabilitiesWei: bigint): void {
    if (s.signing === signing) return;
    s.signing = signing;
    const verdict = solvencyVerdict({
      depositWei: s.depositWei ?? 0n,
      liabilitiesWei,
      floorWei: s.floorWei,
      marginBps: settings.marginBps,
    });
    const data = {
      chainId: s.chain.chainId,
      paymaster: s.chain.paymaster,
      depositWei: (s.depositWei ?? 0n).toString(),
      liabilitiesWei: liabilitiesWei.toString(),
      floorWei: s.floorWei.toString(),
      margin: Number(settings.marginBps) / 10_000,
      requiredWei: verdict.requiredWei.toString(),
      ...(verdict.reason === undefined ? {} : { reason: verdict.reason }),
    };
    if (signing) logger.info(data, 'solvency: the paymaster deposit covers its liabilities again; signing resumed');
    else logger.error(data, 'solvency: paymaster deposit too low; signing stopped on this chain until topped up');
    const sent = deps.alert?.send({
      type: signing ? 'paymaster.solvency.recovered' : 'paymaster.solvency.halted',
      data,
    });
    if (sent !== undefined) {
      pendingAlerts.add(sent);
      void sent.finally(() => pendingAlerts.delete(sent));
    }
  }

  /** Evaluates one chain against `liabilitiesWei`; flips the state (log, alert) when the verdict changed. */
  function evaluate(s: ChainState, liabilitiesWei: bigint): boolean {
    if (!deps.enforce || s.depositWei === undefined) return true;
    const { signing } = solvencyVerdict({
      depositWei: s.depositWei,
      liabilitiesWei,
      floorWei: s.floorWei,
      marginBps: settings.marginBps,
    });
    transition(s, signing, liabilitiesWei);
    return signing;
  }

  function view(s: ChainState): ChainSolvency {
    const liabilitiesWei = liabilities.current(paymasterKey(s.chain));
    const rate = spend.weiPerSecond(paymasterKey(s.chain));
    return {
      chainId: s.chain.chainId,
      paymaster: s.chain.paymaster,
      depositWei: s.depositWei,
      liabilitiesWei,
      floorWei: s.floorWei,
      marginBps: settings.marginBps,
      requiredWei: solvencyVerdict({ depositWei: 0n, liabilitiesWei, floorWei: 0n, marginBps: settings.marginBps })
        .requiredWei,
      signing: s.signing,
      spendWeiPerSecond: rate,
      runwaySeconds: s.depositWei === undefined ? undefined : runwaySeconds(s.depositWei, rate),
      checkedAt: s.checkedAt,
      staked: s.staked,
    };
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
    evaluate(s, liabilities.total(paymasterKey(s.chain), s.head));
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
      assertCovered(key, liabilities.current(key) + op.worstCaseWei);
      liabilities.record(op);
    },
    staked: (paymaster) => states.get(paymasterKey(paymaster))?.staked,
    state: () => [...states.values()].map(view),
    observeIncluded({ chainId, paymaster, userOpHash, opKey, actualGasCost }) {
      const key = paymasterKey({ chainId, paymaster });
      liabilities.included(key, userOpHash);
      if (opKey !== undefined) liabilities.included(key, opKey);
      // Settlement may hand an event over again (after a restart or a reorg): spent once.
      const seen = `${key}:${userOpHash.toLowerCase()}`;
      if (included.has(seen)) return;
      if (included.size >= SEEN_INCLUSIONS) included.clear();
      included.add(seen);
      spend.add({ key, wei: actualGasCost });
    },
    checkNow,
    async close() {
      stopped = true;
      clearTimeout(timer);
      await first.catch(() => undefined);
      clearTimeout(timer);
      deps.alert?.close();
      await Promise.all([...pendingAlerts]);
    },
  };
}
