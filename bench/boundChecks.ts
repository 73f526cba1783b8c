import { DEFAULT_SIGNING_BOUNDS } from '../src/config/boundsSettings.js';
import { assertFeesWithinBounds, assertGasWithinBounds } from '../src/paymaster/signingBounds.js';
import { simpleAccountOp } from './sampleOp.js';

/**
 * CPU µs per request of the two bound checks a sponsored request runs (fees, then gas and worst-case cost),
 * timed in this process: the guard-less reference server (g) still runs them against unbounded limits, so the
 * benchmark adds this to a − g. Timed with the deployment's default bounds and the bench's op, which passes.
 */
export function boundChecksMicros(iterations = 300_000): number {
  const op = simpleAccountOp({
    factory: `0x${'11'.repeat(20)}`,
    owner: `0x${'22'.repeat(20)}`,
    salt: 0n,
    sender: `0x${'33'.repeat(20)}`,
    target: `0x${'22'.repeat(20)}`,
  });
  const fees = { baseFee: 1_000_000_000n, tip: 1_000_000_000n };
  const bounds = DEFAULT_SIGNING_BOUNDS;
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      assertFeesWithinBounds(op, fees, bounds);
      assertGasWithinBounds(op, op.maxFeePerGas, bounds);
    }
  };
  run(iterations / 10); // warm-up (JIT)
  const before = process.cpuUsage();
  run(iterations);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / iterations;
}
