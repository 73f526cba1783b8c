import { type ChainRegistry, deploymentViews } from '../chain/chainRegistry.js';
import { ENTRY_POINT_ADDRESSES } from '../chain/entryPoints.js';
import type { Config } from '../config/config.js';
import { includedOpKey } from '../store/events/requestLogRepository.js';
import type { Store } from '../store/store.js';
import { includedSignatureOf } from './includedSignatureOf.js';
import type { SettlementFollowerDeps, SettlementLogger } from './settlementFollowerDeps.js';
import { type Settlement, type SettlementDeps, settlementOff, startSettlement } from './settlementService.js';
import type { ListTanks } from './tankFollowers.js';

/** How long the start waits for every chain's first round before serving without it. */
const FIRST_ROUNDS_WAIT_MS = 5000;

type OnIncluded = NonNullable<SettlementFollowerDeps['onIncluded']>;

/** What is told of an included op (the signing gate, the metrics, the lifecycle events): idempotent, each of them. */
export interface IncludedObserver {
  onIncluded(args: Parameters<OnIncluded>[0]): void | Promise<void>;
}

/**
 * Settlement as deps.ts runs it (src/settlement/README.md), last, once every chain client and the store exist: a
 * follower per paymaster deployment of every served chain, and after each included op the observers in order, then
 * the request log's cost. PATRON_SETTLEMENT=false: settlementOff. Waits (bounded) for the first rounds.
 */
export async function buildSettlement(args: {
  readonly config: Pick<Config, 'settlement'>;
  readonly chains: ChainRegistry;
  /** `meeTanks` (store.meeTanks, issue 35): the MEE gas tanks to follow, listed each round; none without it. */
  readonly store: Pick<Store, 'chainCursors' | 'spendLedger' | 'requestLog' | 'followerLease'> & {
    readonly meeTanks?: { list: ListTanks };
  };
  readonly nativeUsdMicros: (chainId: number) => bigint | undefined;
  /** Told of each included op, one after the other in this order, before the request log's cost is written. */
  readonly observers: readonly IncludedObserver[];
  /**
   * The lifecycle events: reorgs and token charges, and their recorder written out before a slice closes; their
   * `onIncluded` (also among the observers) is all an MEE tank's included payment is told.
   */
  readonly events: Required<Pick<SettlementDeps, 'onIncluded' | 'onReorg' | 'onTokenCharged'>> & {
    readonly recorder: { flush(): Promise<void> };
  };
  readonly onStatus: NonNullable<SettlementDeps['onStatus']>;
  readonly logger: SettlementLogger;
  readonly now: () => number;
}): Promise<Settlement> {
  const { config, store, events, logger, now } = args;
  if (config.settlement.expiryGraceIgnored) {
    logger.warn(
      {},
      'PATRON_SETTLEMENT_EXPIRY_GRACE_SECONDS is deprecated and ignored: reservations are released once the chain is past their window',
    );
  }
  if (!config.settlement.enabled) return settlementOff;
  const settlement = startSettlement({
    // The in-process chain mines a block per transaction and never reorgs: a depth there would only stall.
    chains: args.chains
      .list()
      .flatMap(deploymentViews)
      .map((chain) => ({
        chain,
        confirmations: chain.embedded ? 0 : config.settlement.confirmations,
        // The embedded chain starts from genesis with each process: a kept database's cursor is of another.
        freshChain: chain.embedded,
        includedSignature: includedSignatureOf(chain),
      })),
    cursors: store.chainCursors,
    ledger: store.spendLedger,
    nativeUsdMicros: args.nativeUsdMicros,
    pollMs: config.settlement.pollMs,
    maxBlockRange: BigInt(config.settlement.maxBlockRange),
    onIncluded: async (included) => {
      for (const observer of args.observers) await observer.onIncluded(included);
      // Joined to the op's log rows when they are read, whichever process writes them and whenever: under its
      // userOpHash, and under its op key for the dApps charged (a row of an op signed before its gas was final
      // holds the op key, which another dApp may have signed too: includedOpKey).
      const byDapp = included.dappIds.map((d) => includedOpKey(d, included.event.opKey));
      const keys = [included.event.userOpHash, ...(byDapp.length === 0 ? [included.event.opKey] : byDapp)];
      for (const userOpHash of keys) {
        await store.requestLog.setActualCost({
          chainId: included.chainId,
          userOpHash,
          actualWei: included.event.actualGasCost,
          at: now(),
        });
      }
    },
    onReorg: events.onReorg,
    onTokenCharged: events.onTokenCharged,
    beforeClose: () => events.recorder.flush(),
    onStatus: args.onStatus,
    logger,
    now,
    // Several processes on one PostgreSQL: exactly one follows each chain (store/db/followerLease.ts).
    lease: store.followerLease,
    // Every served chain's MEE gas tanks, on EntryPoint v0.7 (Nexus), whether or not a paymaster of Patron's is
    // deployed for that version there (README.md, "MEE gas tanks").
    ...(store.meeTanks === undefined
      ? {}
      : {
          tanks: {
            listTanks: () => store.meeTanks?.list() ?? Promise.resolve([]),
            chains: args.chains.list().map((chain) => ({
              chain: { chainId: chain.chainId, client: chain.client, entryPoint: ENTRY_POINT_ADDRESSES['0.7'] },
              confirmations: chain.embedded ? 0 : config.settlement.confirmations,
              freshChain: chain.embedded,
            })),
            onIncluded: events.onIncluded,
          },
        }),
  });
  // A first start sets each chain's cursor before anything is signed; an RPC that does not answer must not hold
  // the start up (the rounds go on in the background).
  await Promise.race([settlement.ready(), new Promise((resolve) => setTimeout(resolve, FIRST_ROUNDS_WAIT_MS).unref())]);
  return settlement;
}
