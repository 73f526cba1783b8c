import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_SIGNING_BOUNDS, type SigningBounds } from '../config/boundsSettings.js';
import { BoundsExceededError, PatronError } from '../errors/PatronError.js';
import { toRpcError } from '../rpc/rpcErrors.js';
import { worstCaseCostV06 } from './entryPoints/v06/prefundV06.js';
import { assertFeesWithinBounds, maxFeeCap, tipCap } from './signingBounds.js';

const GWEI = 1_000_000_000n;
const fees = { baseFee: 10n * GWEI, tip: 2n * GWEI };
const limits = { callGasLimit: 100_000n, verificationGasLimit: 200_000n, preVerificationGas: 50_000n };

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

describe('signing bounds', () => {
  test('tip cap = max(tip × multiplier, floor); fee cap = baseFee × multiplier + tip cap', () => {
    assert.equal(tipCap(DEFAULT_SIGNING_BOUNDS, fees), 6n * GWEI);
    assert.equal(tipCap(DEFAULT_SIGNING_BOUNDS, { baseFee: 1n, tip: 0n }), DEFAULT_SIGNING_BOUNDS.minTipCapWei);
    assert.equal(maxFeeCap(DEFAULT_SIGNING_BOUNDS, fees), 36n * GWEI);
    const b: SigningBounds = {
      ...DEFAULT_SIGNING_BOUNDS,
      baseFeeMultiplierPpm: 1_500_000n,
      tipMultiplierPpm: 1_250_000n,
    };
    assert.equal(maxFeeCap(b, fees), 15n * GWEI + 2_500_000_000n);
  });

  test('fees at the caps pass; one wei above is refused, naming the rule, the value and the bound', () => {
    assertFeesWithinBounds({ maxFeePerGas: 36n * GWEI, maxPriorityFeePerGas: 6n * GWEI }, fees, DEFAULT_SIGNING_BOUNDS);
    const tip = broken(() =>
      assertFeesWithinBounds(
        { maxFeePerGas: GWEI, maxPriorityFeePerGas: 6n * GWEI + 1n },
        fees,
        DEFAULT_SIGNING_BOUNDS,
      ),
    );
    assert.deepEqual(tip, {
      rule: 'maxPriorityFeePerGas',
      data: {
        rule: 'maxPriorityFeePerGas',
        value: '6000000001',
        bound: '6000000000',
        unit: 'wei per gas',
        chainTip: '2000000000',
      },
    });
    const fee = broken(() =>
      assertFeesWithinBounds(
        { maxFeePerGas: 36n * GWEI + 1n, maxPriorityFeePerGas: GWEI },
        fees,
        DEFAULT_SIGNING_BOUNDS,
      ),
    );
    assert.equal(fee.rule, 'maxFeePerGas');
    assert.equal(fee.data.bound, (36n * GWEI).toString());
    assert.equal(fee.data.baseFee, (10n * GWEI).toString());
  });

  test('the attack values: 1,000 ETH per gas and 2^256-1 are refused', () => {
    for (const v of [1000n * 10n ** 18n, (1n << 256n) - 1n]) {
      assert.equal(
        broken(() => assertFeesWithinBounds({ maxFeePerGas: v, maxPriorityFeePerGas: v }, fees, DEFAULT_SIGNING_BOUNDS))
          .rule,
        'maxPriorityFeePerGas',
      );
      assert.equal(
        broken(() =>
          assertFeesWithinBounds({ maxFeePerGas: v, maxPriorityFeePerGas: GWEI }, fees, DEFAULT_SIGNING_BOUNDS),
        ).rule,
        'maxFeePerGas',
      );
    }
  });

  test("the worst-case cost is EntryPoint v0.6's prefund with a paymaster", () => {
    // (100k + 3 × 200k + 50k) × fee
    assert.equal(worstCaseCostV06(limits, 1n), 750_000n);
    assert.equal(worstCaseCostV06(limits, 40n * GWEI), 750_000n * 40n * GWEI);
  });

  test('on the wire: -32040, HTTP 400, the message and data name rule, value and bound', () => {
    const err = new BoundsExceededError({ rule: 'callGasLimit', value: 11n, bound: 10n, unit: 'gas' });
    assert.ok(err instanceof PatronError);
    const wire = toRpcError(err);
    assert.equal(wire.http, 400);
    assert.equal(wire.error.code, -32040);
    assert.equal(
      wire.error.message,
      'Out of bounds: callGasLimit 11 gas is above the bound 10; Patron does not sign it',
    );
    assert.deepEqual(wire.error.data, { rule: 'callGasLimit', value: '11', bound: '10', unit: 'gas' });
  });
});
