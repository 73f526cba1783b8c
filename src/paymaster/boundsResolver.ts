import { applyBoundsOverride, type BoundsOverride, type SigningBounds } from '../config/boundsSettings.js';
import { type DappLimits, dappBoundsFor } from '../dappSettings/dappLimits.js';

/**
 * The signing bounds of one request: the deployment's, then the chain's override (PATRON_CHAINS[i].bounds),
 * then the dApp's (its operator limits, dApp-wide then per chain), each field from the most specific place that
 * sets it. Memoised per dApp limits object (the cached dApp record keeps the same one), so a request pays a
 * map lookup, not a merge.
 */
export type BoundsResolver = (limits: DappLimits, chainId: number) => SigningBounds;

export function createBoundsResolver(args: {
  deployment: SigningBounds;
  chains: ReadonlyMap<number, BoundsOverride>;
}): BoundsResolver {
  const perChain = (chainId: number) => applyBoundsOverride(args.deployment, args.chains.get(chainId));
  const memo = new WeakMap<DappLimits, Map<number, SigningBounds>>();
  return (limits, chainId) => {
    let byChain = memo.get(limits);
    if (byChain === undefined) {
      byChain = new Map();
      memo.set(limits, byChain);
    }
    let bounds = byChain.get(chainId);
    if (bounds === undefined) {
      bounds = applyBoundsOverride(perChain(chainId), dappBoundsFor(limits, chainId));
      byChain.set(chainId, bounds);
    }
    return bounds;
  };
}
