import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_SIGNING_BOUNDS, type SigningBounds } from '../config/boundsSettings.js';
import { BoundsExceededError } from '../errors/PatronError.js';
import type { EntryPointModule } from './entryPoints/entryPointModule.js';
import { entryPointModule } from './entryPoints/entryPointModules.js';
import {
  assertGasWithinBounds,
  assertPreVerificationGas,
  gasCapsFor,
  type OpGasBounds,
  opGasBounds,
} from './gasBounds.js';

const bounds = DEFAULT_SIGNING_BOUNDS;
const limits = { callGasLimit: 100_000n, verificationGasLimit: 200_000n, preVerificationGas: 50_000n };
const v06 = entryPointModule('0.6');
const v07 = entryPointModule('0.7');
const v08 = entryPointModule('0.8');

function gasOf(
  ep: EntryPointModule,
  args: { needed?: bigint; postOp?: bigint; bounds?: SigningBounds } = {},
): OpGasBounds {
  return opGasBounds({
    ep,
    bounds: args.bounds ?? bounds,
    preVerificationGasNeeded: args.needed ?? 50_000n,
    paymasterPostOpGasLimit: args.postOp ?? 0n,
  });
}

/** The rule and data of the bound an assertion broke. */
function broken(fn: () => void): { rule: string; data: Record<string, unknown> } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof BoundsExceededError, String(err));
    return { rule: err.rule, data: { ...err.data } };
  }
  assert.fail('expected the bound to be broken');
}

describe('the gas bounds of an op', () => {
  test('each field is capped, then the worst-case cost; limits and caps are both held', () => {
    const gas = gasOf(v06);
    assertGasWithinBounds({ gas, limits, worstCaseWei: 0n });
    const rule = (l: Partial<typeof limits>, caps?: Partial<typeof limits>) =>
      broken(() =>
        assertGasWithinBounds({
          gas,
          limits: { ...limits, ...l },
          ...(caps === undefined ? {} : { caps: { ...limits, ...caps } }),
          worstCaseWei: 0n,
        }),
      ).rule;
    assert.equal(rule({ callGasLimit: bounds.maxCallGasLimit + 1n }), 'callGasLimit');
    assert.equal(rule({ verificationGasLimit: bounds.maxVerificationGasLimit + 1n }), 'verificationGasLimit');
    assert.equal(rule({ preVerificationGas: bounds.maxPreVerificationGas + 1n }), 'preVerificationGas');
    // The limits an answer returns must fit too, not only the caps the signature binds (AA34 otherwise).
    assert.equal(rule({}, { callGasLimit: bounds.maxCallGasLimit + 1n }), 'callGasLimit');
    const cost = broken(() => assertGasWithinBounds({ gas, limits, worstCaseWei: bounds.maxOpCostWei + 1n }));
    assert.deepEqual(cost.data, {
      rule: 'maxOpCost',
      value: (bounds.maxOpCostWei + 1n).toString(),
      bound: bounds.maxOpCostWei.toString(),
      unit: 'wei',
    });
  });

  test('preVerificationGas: at most what the op needs × the multiplier + the slack, naming what it needs', () => {
    const gas = gasOf(v06, { needed: 50_000n });
    // 50,000 × 1.1 (the default slack is 0)
    assert.equal(gas.maxPreVerificationGasForSize, 55_000n);
    assertPreVerificationGas(gas, 55_000n);
    assertPreVerificationGas(gas, undefined);
    assert.deepEqual(broken(() => assertPreVerificationGas(gas, 55_001n)).data, {
      rule: 'preVerificationGasForSize',
      value: '55001',
      bound: '55000',
      unit: 'gas',
      needed: '50000',
    });
    const slack = gasOf(v06, { needed: 50_000n, bounds: { ...bounds, preVerificationGasSlack: 3_000n } });
    assert.equal(slack.maxPreVerificationGasForSize, 58_000n);
    const loose = gasOf(v06, {
      bounds: { ...bounds, preVerificationGasMultiplierPpm: 2_000_000n, preVerificationGasSlack: 0n },
    });
    assert.equal(loose.maxPreVerificationGasForSize, 100_000n);
  });

  test('the unused-gas penalty: bounded on v0.7+ at the limits (and caps), none on v0.6', () => {
    const huge = { ...limits, callGasLimit: 8_000_000n };
    assertGasWithinBounds({ gas: gasOf(v06), limits: huge, worstCaseWei: 0n });
    for (const ep of [v07, v08]) {
      const refused = broken(() => assertGasWithinBounds({ gas: gasOf(ep), limits: huge, worstCaseWei: 0n }));
      assert.deepEqual(refused.data, {
        rule: 'unusedGasPenalty',
        value: '800000',
        bound: '100000',
        unit: 'gas',
        callGasLimit: '8000000',
      });
      assertGasWithinBounds({ gas: gasOf(ep), limits: { ...limits, callGasLimit: 1_000_000n }, worstCaseWei: 0n });
    }
    // v0.7 adds the postOp limit to the call's; v0.8 counts it apart, above 40,000 only.
    assert.equal(gasOf(v07, { postOp: 50_000n }).unusedGasPenalty(1_000_000n), 105_000n);
    assert.equal(gasOf(v08, { postOp: 40_000n }).unusedGasPenalty(1_000_000n), 100_000n);
  });

  test('ERC-7562: verificationGasLimit below 500,000 on v0.7+ whatever the bounds allow; v0.6 unchanged', () => {
    assert.equal(gasOf(v07).maxVerificationGasLimit, 499_999n);
    assert.equal(gasOf(v06).maxVerificationGasLimit, bounds.maxVerificationGasLimit);
    const tighter = gasOf(v08, { bounds: { ...bounds, maxVerificationGasLimit: 300_000n } });
    assert.equal(tighter.maxVerificationGasLimit, 300_000n);
    const r = broken(() =>
      assertGasWithinBounds({
        gas: gasOf(v07),
        limits: { ...limits, verificationGasLimit: 500_000n },
        worstCaseWei: 0n,
      }),
    );
    assert.deepEqual([r.rule, r.data.bound], ['verificationGasLimit', '499999']);
  });

  test('caps: headroom shrunk to every bound, never below the limits; preVerificationGas at its bound', () => {
    const gas = gasOf(v07, { needed: 50_000n });
    assert.deepEqual(gasCapsFor(limits, gas), {
      verificationGasLimit: 450_000n,
      callGasLimit: 250_000n,
      preVerificationGas: 55_000n,
    });
    // A call near the penalty bound: its cap stops where the penalty would pass 100,000 gas (v0.7: 1,000,009).
    const big = { ...limits, callGasLimit: 900_000n, verificationGasLimit: 400_000n };
    const caps = gasCapsFor(big, gas);
    assert.equal(caps.callGasLimit, 1_000_009n);
    assert.equal(caps.verificationGasLimit, 499_999n);
    assertGasWithinBounds({ gas, limits: big, caps, worstCaseWei: 0n });
    // Limits never shrink: out of bounds they are refused, not signed under lower caps.
    const over = { ...limits, callGasLimit: 2_000_000n };
    assert.equal(gasCapsFor(over, gas).callGasLimit, 2_000_000n);
    assert.equal(
      broken(() => assertGasWithinBounds({ gas, limits: over, caps: gasCapsFor(over, gas), worstCaseWei: 0n })).rule,
      'unusedGasPenalty',
    );
  });
});
