import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDepositTrend } from './depositTrend.js';
import { paymasterKey } from './paymasterKey.js';

test('spend from successive reads: drops over the last hour, top-ups not spend', () => {
  const trend = createDepositTrend({ windowMs: 3_600_000 });
  const key = paymasterKey({ chainId: 1, paymaster: '0x0000000000000000000000000000000000000001' });
  assert.equal(trend.weiPerHour(key, 0), undefined);
  trend.record({ key, depositWei: 1000n, at: 0 });
  assert.equal(trend.weiPerHour(key, 0), undefined, 'one read is no rate');
  trend.record({ key, depositWei: 900n, at: 900_000 });
  trend.record({ key, depositWei: 5000n, at: 1_800_000 }); // topped up
  trend.record({ key, depositWei: 4800n, at: 2_700_000 });
  // 100 + 200 spent in 45 minutes: 400 an hour.
  assert.equal(trend.weiPerHour(key, 2_700_000), 400n);
  // Two hours on, reads every 15 min with no spend: the old drops have left the window.
  for (let at = 3_600_000; at <= 9_000_000; at += 900_000) trend.record({ key, depositWei: 4800n, at });
  assert.equal(trend.weiPerHour(key, 9_000_000), 0n);
});
