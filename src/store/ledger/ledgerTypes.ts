/**
 * The spend ledger's values (spendLedgerRepository.ts has the rules): what a reservation asks for and what it is
 * told, shared by the repository and the files it is built of (the SQLite and PostgreSQL batches, the merge, the
 * row work), which import them from here rather than back from the repository.
 */
export type LedgerUnit = 'wei' | 'usd' | 'ops';

/**
 * The keys of hold counters (policies/holdCharges.ts): reserved and released with their reservation like any charge,
 * never added to `used` when it settles (what a caller holds, not what was spent).
 */
export const HOLD_KEY_PREFIX = 'hold|';

/**
 * 'guarantee': a token-mode op whose charge is collected after execution (src/settlement/README.md); 'token': a
 * token-mode op prefunded in validation (no charges: the row records which dApp signed it and spends its token's jti);
 * 'mee': an MEE quote's payment from a gas tank (its `paymaster` is the tank: the tank's follower settles it at the
 * reserved amounts, src/settlement/README.md "MEE gas tanks").
 */
export type ReservationKind = 'sponsored' | 'guarantee' | 'token' | 'mee';

/**
 * A signature's validity window in the chain's own terms: `validUntil` in unix seconds as signed (compared with
 * block.timestamp), or an EntryPoint v0.9 block window's last block (compared with block.number).
 */
export interface ChainWindow {
  readonly unit: 'seconds' | 'blocks';
  readonly until: number;
}

export interface LedgerCharge {
  /** The counter row: policy, cap and window (policies/policyRules.ts). */
  readonly key: string;
  readonly unit: LedgerUnit;
  /** wei, micro-USD or a count. */
  readonly amount: bigint;
  readonly limit: bigint;
  /** Unix ms when the cap's window ends; undefined for a cap that never resets. */
  readonly windowEnd: number | undefined;
  /**
   * A hold's cap (policies/holdCharges.ts): this charge's limit binds only while that cap is busy, its reservations
   * with this request's taking more than half of its room (limit − used): a caller or sender may hold more than its
   * share of a quiet cap (a user's ops back to back, before settlement sees the first), never of a contested one.
   * The cap's own charge is in the same request.
   */
  readonly bindsWhenBusy?: string | undefined;
}

/**
 * A cap's counter as a reservation moved it (`reportUsage`): `used` (settled) and the committed total, used plus
 * reserved, before and after. policy.threshold events compare them in memory (policies/capThresholds.ts).
 */
export interface CapUsage {
  readonly key: string;
  readonly used: bigint;
  readonly before: bigint;
  readonly after: bigint;
}

export type ReserveResult =
  | { readonly ok: true; readonly usage?: readonly CapUsage[] }
  | {
      readonly ok: false;
      /** The first charge that did not fit. */
      readonly charge: LedgerCharge;
      readonly used: bigint;
      readonly reserved: bigint;
    }
  /** The dApp's policies changed since the request read them (`policyVersion`): nothing was reserved. */
  | { readonly ok: false; readonly policyVersion: number }
  /** The request's sponsorship token (`tokenUse`) was spent already: nothing was reserved. */
  | { readonly ok: false; readonly tokenReplayed: true }
  /** The dApp signed this op key MAX_SIGNATURES times already (reservationMerge.ts): nothing was reserved. */
  | { readonly ok: false; readonly tooManySignatures: number };

/**
 * A sponsorship token's jti, spent in the reservation's own transaction (table sponsorship_token_uses, migration
 * 0017): only once the caps took the op, and never without its reservation, so a token is used up exactly when an op
 * is reserved under it. A row already expired (`expiresAt` < `nowSeconds`, Unix seconds) is taken over.
 */
export interface TokenUse {
  readonly jti: string;
  readonly expiresAt: number;
  readonly nowSeconds: number;
}

export interface CounterState {
  readonly used: bigint;
  readonly reserved: bigint;
}

export interface ReserveArgs {
  /**
   * The reservation's id, `<dappId>:<opKey>` (reservationId): the dApp's every signature of one op key is one row,
   * holding the largest worst case of them (reservationMerge.ts).
   */
  readonly id: string;
  readonly dappId: string;
  readonly chainId: number;
  /** The EntryPoint's userOpHash as signed, or the op key of an op signed before its gas was final. */
  readonly userOpHash: string | undefined;
  /** chain/opKey.ts, lower-case 0x hex: what settlement finds the row by. */
  readonly opKey?: string | undefined;
  /** The signature's fingerprint (signatureFingerprint): which of two dApps' signatures an included op carries. */
  readonly signature?: string | undefined;
  readonly charges: readonly LedgerCharge[];
  /** Unix ms: when the window has surely closed, for the request log and the dashboard. */
  readonly expiresAt: number;
  readonly now: number;
  /** The signed window; default: `expiresAt` in seconds. */
  readonly window?: ChainWindow | undefined;
  /** The paymaster that signed (its settlement follower releases it); default: any follower of the chain. */
  readonly paymaster?: string | undefined;
  readonly kind?: ReservationKind | undefined;
  /** Answer with each moved counter's `usage` (already read under the lock: no extra query). */
  readonly reportUsage?: boolean | undefined;
  /** When given, reserved only if the dApp's policy version is still this one (else `{ok: false, policyVersion}`). */
  readonly policyVersion?: number | undefined;
  /** The itemized ledger's facts (migration 0019), written by the reservation's own INSERT. */
  readonly item?: LedgerItemFacts | undefined;
  /** The request's sponsorship token, spent with the reservation (`{ok: false, tokenReplayed}` when it was already). */
  readonly tokenUse?: TokenUse | undefined;
}

/** What the itemized ledger shows of a signed op besides its charges (ledgerQueryRepository.ts). */
export interface LedgerItemFacts {
  /** Lower-case 0x hex. */
  readonly sender: string;
  /** A verified sponsorship token's `sub`, when the request carried one. */
  readonly user: string | undefined;
  readonly policyIds: readonly string[];
  readonly worstCaseWei: bigint;
}

/** The block whose event closed a reservation (for a reorg to reopen it). */
export interface ClosingBlock {
  readonly number: bigint;
  readonly hash: string;
}

/** The transaction an event closed a reservation in, for the itemized ledger. */
export interface IncludedIn {
  readonly txHash: string;
  /** The UserOperationEvent's `success`: false when the op reverted (the paymaster paid all the same). */
  readonly success: boolean;
}
