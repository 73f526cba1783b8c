import { DEFAULT_SIGNING_BOUNDS } from '../src/config/boundsSettings.js';
import { entryPointModule } from '../src/paymaster/entryPoints/entryPointModules.js';
import { assertGasWithinBounds, opGasBounds } from '../src/paymaster/gasBounds.js';
import { assertFeesWithinBounds, worstCaseCostV06 } from '../src/paymaster/signingBounds.js';
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
  const ep = entryPointModule('0.6');
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      assertFeesWithinBounds(op, fees, bounds);
      // What the op needs in preVerificationGas is computed apart (a's figure has it); here only the comparisons.
      const gas = opGasBounds({ ep, bounds, preVerificationGasNeeded: 50_000n, paymasterPostOpGasLimit: 0n });
      assertGasWithinBounds({ gas, limits: op, worstCaseWei: worstCaseCostV06(op, op.maxFeePerGas) });
    }
  };
  run(iterations / 10); // warm-up (JIT)
  const before = process.cpuUsage();
  run(iterations);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / iterations;
}
