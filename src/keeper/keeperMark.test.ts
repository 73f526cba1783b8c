import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keeperMark, topupPlan } from './keeperMark.js';

const E = 10n ** 18n;

test('the mark: liabilities × margin (rounded up) + floor + spend rate × lead time, never below the minimum', () => {
  const base = { marginBps: 15_000n, floorWei: E, leadTimeSeconds: 7200, minimumWei: 0n };
  // 2 ETH × 1.5 + 1 ETH + 0.5 ETH/h × 2 h = 5 ETH.
  assert.equal(keeperMark({ ...base, liabilitiesWei: 2n * E, spendWeiPerHour: E / 2n }), 5n * E);
  // No spend seen: no lead.
  assert.equal(keeperMark({ ...base, liabilitiesWei: 2n * E, spendWeiPerHour: undefined }), 4n * E);
  // Rounded up, as the guard's verdict: 1 wei × 1.5 is 2 wei.
  assert.equal(keeperMark({ ...base, floorWei: 0n, liabilitiesWei: 1n, spendWeiPerHour: undefined }), 2n);
  // The explicit minimum holds when the derived mark is lower.
  assert.equal(keeperMark({ ...base, liabilitiesWei: 0n, spendWeiPerHour: undefined, minimumWei: 3n * E }), 3n * E);
});

test('a round tops up to the target, capped by the daily limit left and the funds beyond the reserve', () => {
  const at = { depositWei: E, markWei: 2n * E, targetWei: 5n * E };
  assert.deepEqual(topupPlan({ ...at, depositWei: 2n * E, limitLeftWei: 10n * E, spendableWei: 10n * E }), {
    kind: 'none',
  });
  assert.deepEqual(topupPlan({ ...at, limitLeftWei: 10n * E, spendableWei: 10n * E }), {
    kind: 'topup',
    amountWei: 4n * E,
    wantedWei: 4n * E,
    cappedBy: undefined,
  });
  assert.deepEqual(topupPlan({ ...at, limitLeftWei: E, spendableWei: 10n * E }), {
    kind: 'topup',
    amountWei: E,
    wantedWei: 4n * E,
    cappedBy: 'limit',
  });
  assert.deepEqual(topupPlan({ ...at, limitLeftWei: 10n * E, spendableWei: 2n * E }), {
    kind: 'topup',
    amountWei: 2n * E,
    wantedWei: 4n * E,
    cappedBy: 'funds',
  });
  assert.deepEqual(topupPlan({ ...at, limitLeftWei: 0n, spendableWei: 10n * E }), {
    kind: 'refused',
    wantedWei: 4n * E,
    by: 'limit',
  });
  // A funder at or under its reserve.
  assert.deepEqual(topupPlan({ ...at, limitLeftWei: 10n * E, spendableWei: -1n }), {
    kind: 'refused',
    wantedWei: 4n * E,
    by: 'funds',
  });
  // A mark grown past the target: up to the mark.
  assert.deepEqual(topupPlan({ ...at, markWei: 6n * E, limitLeftWei: 10n * E, spendableWei: undefined }), {
    kind: 'topup',
    amountWei: 5n * E,
    wantedWei: 5n * E,
    cappedBy: undefined,
  });
});
