import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EntryPointVersionV07 } from './patronPaymasterV07.js';
import { maxCallGasLimitForPenalty, maxUnusedGasPenalty } from './unusedGasPenalty.js';

/**
 * The most unused-gas penalty, as the EntryPoints compute it (v0.7 `_postExecution`; v0.8/v0.9
 * `_getUnusedGasPenalty`), with nothing of the limits used: the figures below are worked out by hand from those.
 */
describe('the most unused-gas penalty', () => {
  test('v0.7: 10 % of callGasLimit + paymasterPostOpGasLimit together, rounded down', () => {
    assert.equal(maxUnusedGasPenalty('0.7', { callGasLimit: 8_000_000n, paymasterPostOpGasLimit: 0n }), 800_000n);
    assert.equal(maxUnusedGasPenalty('0.7', { callGasLimit: 30_005n, paymasterPostOpGasLimit: 50_000n }), 8_000n);
    assert.equal(maxUnusedGasPenalty('0.7', { callGasLimit: 9n, paymasterPostOpGasLimit: 0n }), 0n);
  });

  test('v0.8, v0.9: each part only above 40,000 gas', () => {
    for (const v of ['0.8', '0.9'] as const) {
      assert.equal(maxUnusedGasPenalty(v, { callGasLimit: 40_000n, paymasterPostOpGasLimit: 40_000n }), 0n);
      assert.equal(maxUnusedGasPenalty(v, { callGasLimit: 40_001n, paymasterPostOpGasLimit: 0n }), 4_000n);
      assert.equal(maxUnusedGasPenalty(v, { callGasLimit: 1_000_000n, paymasterPostOpGasLimit: 50_000n }), 105_000n);
    }
  });

  test('the largest callGasLimit within a bound is exact: it fits, one gas more does not', () => {
    for (const version of ['0.7', '0.8', '0.9'] as EntryPointVersionV07[]) {
      for (const penalty of [0n, 1n, 3_999n, 4_000n, 5_000n, 99_999n, 100_000n, 1_234_567n]) {
        for (const postOp of [0n, 40_000n, 50_000n, 400_000n]) {
          const max = maxCallGasLimitForPenalty(version, { penalty, paymasterPostOpGasLimit: postOp });
          const at = (call: bigint) =>
            maxUnusedGasPenalty(version, { callGasLimit: call, paymasterPostOpGasLimit: postOp });
          const what = `v${version}, penalty ${penalty}, postOp ${postOp}`;
          if (max < 0n) {
            assert.equal(max, -1n, what);
            assert.ok(at(0n) > penalty, `${what}: even no call gas pays more`);
            continue;
          }
          assert.ok(at(max) <= penalty, `${what}: ${max} fits`);
          assert.ok(at(max + 1n) > penalty, `${what}: ${max + 1n} does not`);
        }
      }
    }
  });
});
