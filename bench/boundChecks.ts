import type { ChainRuntime } from '../src/chain/chainRegistry.js';
import { DEFAULT_SIGNING_BOUNDS } from '../src/config/boundsSettings.js';
import { finalUserOperation } from '../src/paymaster/entryPoints/entryPointModule.js';
import { entryPointModule } from '../src/paymaster/entryPoints/entryPointModules.js';
import { worstCaseCostV06 } from '../src/paymaster/entryPoints/v06/prefundV06.js';
import {
  assertGasWithinBounds,
  assertPreVerificationGas,
  opGasBounds,
  preVerificationGasNeeded,
} from '../src/paymaster/gasBounds.js';
import { assertFeesWithinBounds } from '../src/paymaster/signingBounds.js';
import { createSizingFields } from '../src/paymaster/sponsored/sizingFields.js';
import { simpleAccountOp } from './sampleOp.js';

/**
 * CPU µs per request of the bound checks a sponsored request runs (fees, then the op's gas bounds: Patron's
 * preVerificationGas figure for its size, each gas field, the unused-gas penalty, the worst-case cost), timed in this
 * process: the guard-less reference server (g) still runs them against unbounded limits, so the benchmark adds this
 * to a − g. Timed with the deployment's default bounds and the bench's op (v0.6, as scenario a), which passes.
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
  const chain = {
    chainId: 31337,
    entryPointVersion: '0.6',
    entryPoint: `0x${'44'.repeat(20)}`,
    paymaster: `0x${'55'.repeat(20)}`,
  } as const as unknown as ChainRuntime;
  const sizingFields = createSizingFields({ mode: 'SPONSORED' });
  const partial = { ...op, eip7702Auth: undefined };
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      assertFeesWithinBounds(op, fees, bounds);
      const sized = finalUserOperation(partial, partial, ep.paymasterGas('SPONSORED'));
      const fields = sizingFields(chain, false);
      const needed = preVerificationGasNeeded({ ep, op: sized, fields, bounds });
      const gas = opGasBounds({ ep, bounds, preVerificationGasNeeded: needed, paymasterPostOpGasLimit: 0n });
      assertPreVerificationGas(gas, op.preVerificationGas);
      assertGasWithinBounds({ gas, limits: op, worstCaseWei: worstCaseCostV06(op, op.maxFeePerGas) });
    }
  };
  run(iterations / 10); // warm-up (JIT)
  const before = process.cpuUsage();
  run(iterations);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / iterations;
}
