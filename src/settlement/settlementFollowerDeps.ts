import type { Address, Hex, PublicClient } from 'viem';
import type { UserOperationEventLog } from '../chain/userOperationEvents.js';
import type { ChainCursorRepository } from '../store/ledger/chainCursorRepository.js';
import type { SpendLedgerRepository } from '../store/ledger/spendLedgerRepository.js';
import type { UserOpSettlement } from '../store/ledger/userOpSettlement.js';

export interface SettlementLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface FollowedChain {
  readonly chainId: number;
  readonly client: PublicClient;
  readonly entryPoint: Address;
  /**
   * Whose ops are followed, and whose reservations (the ledger's `paymaster`) this follower closes and releases:
   * Patron's paymaster, or an MEE gas tank when `follows` is 'sender'.
   */
  readonly paymaster: Address;
  /**
   * Which topic of the UserOperationEvent `paymaster` is matched against. 'sender': an MEE gas tank (README.md, "MEE
   * gas tanks"), whose payment ops' gas another paymaster pays: each is settled at its reserved amounts, or
   * released when it reverted; no op of another sender, no token charge, no attribution is read. Default 'paymaster'.
   */
  readonly follows?: 'paymaster' | 'sender' | undefined;
}

export interface SettlementFollowerDeps {
  readonly chain: FollowedChain;
  readonly cursors: ChainCursorRepository;
  readonly ledger: UserOpSettlement & Pick<SpendLedgerRepository, 'releaseClosed'>;
  /**
   * The chain starts from genesis with this process (the embedded dev chain): a stored cursor that its blocks do
   * not match is a previous run's chain, not a reorg, and is replaced by the head quietly on the first round.
   */
  readonly freshChain?: boolean;
  /** The native coin's price in micro-USD per whole coin, fresh, or undefined (the ledger keeps the reservation). */
  readonly nativeUsdMicros: (chainId: number) => bigint | undefined;
  /** Blocks an event must be under the head before it is settled; a reorg shallower than this is never seen. */
  readonly confirmations: number;
  /** Blocks per eth_getLogs, and per cursor step. */
  readonly maxBlockRange: bigint;
  readonly logger: SettlementLogger;
  readonly now: () => number;
  /**
   * Told of every event after its settlement and before the cursor moves (metrics, the request log's cost); it
   * may see an event again after a restart or a reorg, so it must be idempotent. Its failure is logged and does
   * not hold the round: the ledger must not wait on a secondary record.
   */
  readonly onIncluded?: (args: {
    readonly chainId: number;
    readonly event: UserOperationEventLog;
    /** The dApps whose signature the op carried (the ledger's attribution; empty: Patron reserved nothing for it). */
    readonly dappIds: readonly string[];
  }) => Promise<void>;
  /**
   * The fingerprint of the paymaster signature an included op carries (paymaster/requestFacts.ts), read from its
   * transaction; undefined when it cannot be read. Asked only when several dApps signed the op's key.
   */
  readonly includedSignature?: ((event: UserOperationEventLog) => Promise<string | undefined>) | undefined;
  /**
   * Told of a reorg before the cursor and the reservations are rewound below `aboveBlock` (so a crash in between
   * tells it again next round): `hashAt` gives the canonical hash at a height, to tell which earlier inclusions the
   * new branch removed. Idempotent; its failure fails the round (retried), as the rewind's would.
   */
  readonly onReorg?: (args: {
    readonly chainId: number;
    readonly aboveBlock: bigint;
    readonly hashAt: (blockNumber: bigint) => Promise<Hex | undefined>;
  }) => Promise<void>;
  /**
   * Told of a token-mode op's charge (its TokenCharged, and the prefund and refund its receipt shows) after its
   * onIncluded; the slice's TokenCharged logs are then read (one eth_getLogs per slice holding ops). Idempotent,
   * and its failure is logged without holding the round, as onIncluded's.
   */
  readonly onTokenCharged?: (args: {
    readonly chainId: number;
    readonly event: UserOperationEventLog;
    readonly dappIds: readonly string[];
    readonly charge: {
      readonly token: string;
      readonly charged: bigint;
      readonly prefunded: bigint;
      readonly refunded: bigint;
    };
  }) => Promise<void>;
  /**
   * Awaited before a slice with events closes any reservation: the lifecycle events' recorder writes what it holds,
   * so the `sponsorship.signed` of an op signed a moment ago is in the outbox when its reservation is superseded
   * (the expiry written with the close names that event's dApps).
   */
  readonly beforeClose?: (() => Promise<void>) | undefined;
  /** Checked between slices, so stopping does not wait for a long catch-up. */
  readonly stopped?: () => boolean;
}
