import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { capWindow } from './capWindows.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const window = (resets: Parameters<typeof capWindow>[0], now: string) => {
  const w = capWindow(resets, at(now));
  return [iso(w.start), iso(w.end)];
};

describe('capWindow: calendar-aligned in UTC', () => {
  test('never: one window from the epoch, without end', () => {
    assert.deepEqual(capWindow('never', at('2026-11-25T07:30:00Z')), { start: 0, end: undefined });
  });
  test('hourly and daily', () => {
    assert.deepEqual(window('hourly', '2026-11-25T07:59:59.999Z'), [
      '2026-11-25T07:00:00.000Z',
      '2026-11-25T08:00:00.000Z',
    ]);
    assert.deepEqual(window('hourly', '2026-11-25T08:00:00.000Z'), [
      '2026-11-25T08:00:00.000Z',
      '2026-11-25T09:00:00.000Z',
    ]);
    assert.deepEqual(window('daily', '2026-11-25T23:59:59Z'), ['2026-11-25T00:00:00.000Z', '2026-11-26T00:00:00.000Z']);
  });
  test('weekly starts on Monday, also seen from a Sunday and from the Monday itself', () => {
    const week = ['2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z'];
    assert.deepEqual(window('weekly', '2026-11-25T12:00:00Z'), week); // Wednesday
    assert.deepEqual(window('weekly', '2026-11-29T23:59:59Z'), week); // Sunday
    assert.deepEqual(window('weekly', '2026-11-23T00:00:00Z'), week); // Monday
  });
  test('monthly, across a year and in February of a leap year', () => {
    assert.deepEqual(window('monthly', '2026-12-31T23:00:00Z'), [
      '2026-12-01T00:00:00.000Z',
      '2027-01-01T00:00:00.000Z',
    ]);
    assert.deepEqual(window('monthly', '2028-02-29T10:00:00Z'), [
      '2028-02-01T00:00:00.000Z',
      '2028-03-01T00:00:00.000Z',
    ]);
  });
});
