/**
 * Whether a paymaster may sign on a chain (src/solvency/README.md): its deposit must be at least the floor and
 * at least its live liabilities × margin. Pure: the guard gives the amounts.
 */
export interface SolvencyVerdict {
  readonly signing: boolean;
  /** liabilities × margin, rounded up: what the deposit must reach (besides the floor). */
  readonly requiredWei: bigint;
  /** Why signing stops, when it does. */
  readonly reason: 'floor' | 'liabilities' | undefined;
}

export function solvencyVerdict(args: {
  readonly depositWei: bigint;
  readonly liabilitiesWei: bigint;
  readonly floorWei: bigint;
  /** Basis points: 15000 is × 1.5. */
  readonly marginBps: bigint;
}): SolvencyVerdict {
  const requiredWei = (args.liabilitiesWei * args.marginBps + 9_999n) / 10_000n;
  const reason = args.depositWei < args.floorWei ? 'floor' : args.depositWei < requiredWei ? 'liabilities' : undefined;
  return { signing: reason === undefined, requiredWei, reason };
}

/** Seconds the deposit lasts at the recent spend rate; undefined without recent spend (no rate to divide by). */
export function runwaySeconds(depositWei: bigint, weiPerSecond: number | undefined): number | undefined {
  if (weiPerSecond === undefined || weiPerSecond <= 0) return undefined;
  return Math.floor(Number(depositWei) / weiPerSecond);
}

/**
 * Seconds until what is left beyond the liabilities × margin (`headroomWei`) reaches the floor, where signing stops, at
 * the spend rate; 0 when it is there already; undefined without a rate. The same figure the low-water mark is held to.
 */
export function floorRunwaySeconds(args: {
  readonly headroomWei: bigint;
  readonly floorWei: bigint;
  readonly weiPerHour: bigint | undefined;
}): number | undefined {
  if (args.headroomWei <= args.floorWei) return 0;
  if (args.weiPerHour === undefined || args.weiPerHour <= 0n) return undefined;
  return Number(((args.headroomWei - args.floorWei) * 3600n) / args.weiPerHour);
}

/** deposit − liabilities × margin, never below 0: what the deposit holds beyond what was promised. */
export function headroomWei(args: { readonly depositWei: bigint; readonly requiredWei: bigint }): bigint {
  return args.depositWei > args.requiredWei ? args.depositWei - args.requiredWei : 0n;
}
