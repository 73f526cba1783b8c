/**
 * Which dApp an included op is charged to (issue 31): every dApp that signed an op key has its own reservation of it
 * (reservationMerge.ts), and the EntryPoint includes one op per key, carrying one paymaster signature. Pure: the
 * settlement (userOpSettlement.ts) reads the rows and, only when they are of several dApps, the included op's
 * signature, and closes the rows as this says.
 */

/** A reservation of the op key as settlement reads it. */
export interface OpKeyRow {
  readonly id: string;
  readonly dapp_id: string;
  readonly kind: string;
  readonly status: string;
  /** Space-separated fingerprints of the signatures it stands for (migration 0022). */
  readonly signatures: string | null;
  /** The block of the event that closed it, if one did. */
  readonly settled_block: number | null;
  readonly tx_hash: string | null;
}

/** The rows no event has closed yet: reserved, or released by the window (an op can be read after its release). */
export const openRows = <R extends OpKeyRow>(rows: readonly R[]): R[] =>
  rows.filter((r) => (r.status === 'reserved' || r.status === 'released') && r.settled_block === null);

export const distinctDapps = (rows: readonly OpKeyRow[]): string[] => [...new Set(rows.map((r) => r.dapp_id))];

/**
 * The rows to charge and the rows to close as superseded. One dApp: its row, no reading needed. Several: the row
 * whose fingerprints hold the included signature's; when that is unknown (the transaction could not be read) or
 * matches none, every open row is charged: each of those dApps signed the key, and charging one for what the op
 * cost is no more than whoever submitted could do by including that dApp's own signature, while charging none would
 * let the deposit pay outside every cap.
 */
export function attribute<R extends OpKeyRow>(args: {
  readonly open: readonly R[];
  readonly fingerprint: string | undefined;
}): { readonly chosen: R[]; readonly superseded: R[] } {
  const { open, fingerprint } = args;
  if (distinctDapps(open).length <= 1) return { chosen: [...open], superseded: [] };
  const matched =
    fingerprint === undefined ? [] : open.filter((r) => (r.signatures ?? '').split(' ').includes(fingerprint));
  if (matched.length === 0) return { chosen: [...open], superseded: [] };
  return { chosen: matched, superseded: open.filter((r) => !matched.includes(r)) };
}
