import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GasLimits } from '../entryPoints/entryPointModule.js';
import { affordableCaps } from './affordableCaps.js';

const limits: GasLimits = { callGasLimit: 20_000n, verificationGasLimit: 300_000n, preVerificationGas: 50_000n };
const caps: GasLimits = { callGasLimit: 90_000n, verificationGasLimit: 650_000n, preVerificationGas: 100_000n };
/** A charge that grows with every cap, as maxChargeWei does (a fee of 3 units per gas, plus a fixed part). */
const charge = (c: GasLimits) => (c.callGasLimit + c.verificationGasLimit + c.preVerificationGas) * 3n + 7n;

test('affordableCaps: the widest caps whose charge fits the budget, between the limits and the caps', () => {
  assert.deepEqual(affordableCaps({ limits, caps, charge, budget: charge(caps) }), caps, 'all of the headroom fits');
  assert.equal(affordableCaps({ limits, caps, charge, budget: charge(limits) - 1n }), undefined, 'not even the limits');
  assert.deepEqual(affordableCaps({ limits, caps, charge, budget: charge(limits) }), limits);
  for (const budget of [charge(limits) + 1n, 1_500_000n, 2_000_000n, charge(caps) - 1n]) {
    const found = affordableCaps({ limits, caps, charge, budget });
    assert.ok(found, String(budget));
    assert.ok(charge(found) <= budget, `${charge(found)} ≤ ${budget}`);
    for (const k of ['callGasLimit', 'verificationGasLimit', 'preVerificationGas'] as const) {
      assert.ok(found[k] >= limits[k] && found[k] <= caps[k], k);
    }
    // One step (1/1024 of the headroom) wider would not fit: the search took all it could.
    const wider = {
      callGasLimit: found.callGasLimit + (caps.callGasLimit - limits.callGasLimit) / 1024n + 1n,
      verificationGasLimit:
        found.verificationGasLimit + (caps.verificationGasLimit - limits.verificationGasLimit) / 1024n + 1n,
      preVerificationGas: found.preVerificationGas + (caps.preVerificationGas - limits.preVerificationGas) / 1024n + 1n,
    };
    assert.ok(charge(wider) > budget, `${charge(wider)} > ${budget}`);
  }
});

test('affordableCaps: a cap at or below its limit stays at the limit', () => {
  const flat = { ...caps, preVerificationGas: limits.preVerificationGas };
  const found = affordableCaps({ limits, caps: flat, charge, budget: 1_500_000n });
  assert.equal(found?.preVerificationGas, limits.preVerificationGas);
});
