import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AlertState, CALM, nextAlert } from './alertHysteresis.js';

const LOW = 300n;
const step = (state: AlertState, now: number, headroomWei: bigint, signing = true) =>
  nextAlert({ state, signing, headroomWei, lowWaterWei: LOW, now, holdMs: 1000 });

test('entered at once, left only clear of the mark for the hold time; every dip restarts the wait', () => {
  let r = step(CALM, 0, 299n);
  assert.deepEqual(r, { state: { level: 'low', calmSince: undefined }, post: 'low' });
  r = step(r.state, 1, 0n, false);
  assert.equal(r.post, 'halted');
  // Back above the mark at 10, a dip under it at 500 (signing all along), clear again from 600.
  r = step(r.state, 10, 300n);
  assert.deepEqual(r, { state: { level: 'halted', calmSince: 10 }, post: undefined });
  r = step(r.state, 500, 299n);
  assert.deepEqual(r, { state: { level: 'halted', calmSince: undefined }, post: undefined });
  r = step(r.state, 600, 400n);
  r = step(r.state, 1599, 400n);
  assert.equal(r.post, undefined);
  r = step(r.state, 1600, 400n);
  assert.deepEqual(r, { state: { level: 'low', calmSince: undefined }, post: 'recovered' });
  // Under the mark again right after: no second warning, the first one stands.
  r = step(r.state, 1700, 100n);
  assert.equal(r.post, undefined);
  // The warning clears at 10 % above the mark only (330), after the hold, without an alert; then it re-arms.
  r = step(r.state, 1800, 329n);
  assert.equal(r.state.calmSince, undefined);
  r = step(r.state, 1900, 330n);
  r = step(r.state, 2900, 330n);
  assert.deepEqual(r, { state: CALM, post: undefined });
  assert.equal(step(r.state, 3000, 1n).post, 'low');
  // Straight from ok to a halt: one alert, the halt.
  assert.equal(step(CALM, 0, 0n, false).post, 'halted');
});
