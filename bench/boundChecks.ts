import type { ChainRuntime } from '../src/chain/chainRegistry.js';
import type { L1Fee } from '../src/chain/readL1Fee.js';
import { DEFAULT_SIGNING_BOUNDS, type SigningBounds } from '../src/config/boundsSettings.js';
import { finalUserOperation } from '../src/paymaster/entryPoints/entryPointModule.js';
import { entryPointModule } from '../src/paymaster/entryPoints/entryPointModules.js';
import { worstCaseCostV06 } from '../src/paymaster/entryPoints/v06/prefundV06.js';
import {
  assertGasWithinBounds,
  assertPreVerificationGas,
  opGasBounds,
  preVerificationGasNeeded,
} from '../src/paymaster/gasBounds.js';
import { l1DataPricing } from '../src/paymaster/l1DataGas.js';
import { assertFeesWithinBounds } from '../src/paymaster/signingBounds.js';
import { createSizingFields } from '../src/paymaster/sponsored/sizingFields.js';
import { simpleAccountOp } from './sampleOp.js';

/**
 * CPU µs per request of the bound checks a sponsored request runs (fees, then the op's gas bounds: Patron's
 * preVerificationGas figure for its size, each gas field, the unused-gas penalty, the worst-case cost), timed in this
 * process: the guard-less reference server (g) still runs them against unbounded limits, so the benchmark adds this
 * to a − g. Timed with the deployment's default bounds and the bench's op (v0.6, as scenario a), which passes; on an
 * L2, with the L1 fee the chain's fee read brought (`l1`) and the bounds given (`l1DataGasPerByte`, its ceiling).
 */
export function boundChecksMicros(
  iterations = 300_000,
  l2: { readonly l1?: L1Fee; readonly bounds?: SigningBounds } = {},
): number {
  const op = simpleAccountOp({
    factory: `0x${'11'.repeat(20)}`,
    owner: `0x${'22'.repeat(20)}`,
    salt: 0n,
    sender: `0x${'33'.repeat(20)}`,
    target: `0x${'22'.repeat(20)}`,
  });
  const fees = { baseFee: 1_000_000_000n, tip: 1_000_000_000n, blockNumber: 1n, timestamp: 0, readAt: 0, l1: l2.l1 };
  const bounds = l2.bounds ?? DEFAULT_SIGNING_BOUNDS;
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
      const l1 = l1DataPricing({ bounds, fees, op });
      const needed = preVerificationGasNeeded({ ep, op: sized, fields, l1 });
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
