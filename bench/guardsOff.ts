import type { FeeOracle } from '../src/chain/feeOracle.js';
import type { SigningBounds } from '../src/config/boundsSettings.js';
import type { DepsOverrides } from '../src/deps.js';

/**
 * The guards of the benchmark's reference Patron (scenario g, `BENCH_GUARDS=off`): what the same service costs
 * without them, so that `a / g` is what the signing bounds (and the rate limits) add per request.
 *
 * - Fees: a constant snapshot, no chain reads (the real oracle refreshes in the background and reads the dev
 *   chain, which runs in the server's process, so its CPU is in a's figure and not in g's).
 * - Bounds: one frozen, unbounded set for every dApp and chain (no resolution, no memo lookup). The comparisons
 *   themselves still run in g (the domain has no switch to skip them, on purpose); the benchmark measures
 *   them apart (`micro` line) so the report can add them.
 * - Rate limits: a limiter that admits everything without counting.
 */
const UNBOUNDED = (1n << 255n) - 1n;

const unbounded: SigningBounds = Object.freeze({
  baseFeeMultiplierPpm: UNBOUNDED,
  tipMultiplierPpm: UNBOUNDED,
  minTipCapWei: UNBOUNDED,
  maxCallGasLimit: UNBOUNDED,
  maxVerificationGasLimit: UNBOUNDED,
  maxPreVerificationGas: UNBOUNDED,
  preVerificationGasMultiplierPpm: UNBOUNDED,
  preVerificationGasSlack: UNBOUNDED,
  // Not a bound but what the chain charges (it raises Patron's own figure): none, as on an L1.
  l1DataGasPerByte: 0n,
  maxUnusedGasPenalty: UNBOUNDED,
  maxOpCostWei: UNBOUNDED,
  holdSharePerCallerPercent: 100,
  holdSharePerSenderPercent: 100,
});

const constantFees: FeeOracle = {
  // The chain's time is the server's: windows as on a chain that keeps up.
  get: () =>
    Promise.resolve({ baseFee: 1n, tip: 1n, blockNumber: 0n, timestamp: Math.floor(Date.now() / 1000), readAt: 0 }),
};

export function guardsOff(): NonNullable<DepsOverrides['guards']> {
  return {
    fees: constantFees,
    bounds: () => unbounded,
    rateLimiter: { take: () => Promise.resolve(), refusals: () => new Map() },
  };
}
