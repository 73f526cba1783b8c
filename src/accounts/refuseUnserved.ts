import { ValidationError } from '../errors/PatronError.js';

/** Refuses chain ids this deployment does not serve (`kept`: ones the dApp already lists, allowed to stay). */
export function refuseUnserved(args: {
  chainIds: readonly number[];
  served: ReadonlySet<number>;
  kept: readonly number[];
}): void {
  const unserved = args.chainIds.filter((id) => !args.served.has(id) && !args.kept.includes(id));
  if (unserved.length === 0) return;
  const servedList = [...args.served].sort((a, b) => a - b);
  const what = unserved.length === 1 ? `chain ${unserved[0]} is` : `chains ${unserved.join(', ')} are`;
  throw new ValidationError(
    servedList.length === 0
      ? `${what} not served by this deployment, which serves no chain yet: the operator sets PATRON_CHAINS`
      : `${what} not served by this deployment; it serves ${servedList.join(', ')} (the operator adds chains with PATRON_CHAINS)`,
  );
}
