import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Address } from 'viem';
import type { DepositSpendRepository } from '../store/ledger/depositSpendRepository.js';
import { createDepositSpendRate } from './depositSpendRate.js';

const HOUR = 3_600_000;
const PAYMASTER = { chainId: 31337, paymaster: '0x00000000000000000000000000000000000000aa' as Address };

/** The ledger's answers, counted: the rate's cost is its queries. */
function ledger(rows: { hour: number; wei: bigint }[], firstAt: number | undefined) {
  const calls = { byHour: 0, firstAt: 0 };
  const source: DepositSpendRepository = {
    async byHour({ since }) {
      calls.byHour++;
      return rows.filter((r) => r.hour * HOUR >= since);
    },
    async firstAt() {
      calls.firstAt++;
      return firstAt;
    },
  };
  return { source, calls, rows };
}

test('a paymaster that never spent costs one ledger query per refresh, not two', async () => {
  const now = 100 * HOUR + 30 * 60_000;
  const l = ledger([], undefined);
  const rate = createDepositSpendRate({ source: l.source, now: () => now });
  for (let i = 0; i < 5; i++) await rate.refresh(PAYMASTER);
  assert.deepEqual(l.calls, { byHour: 5, firstAt: 0 });
  assert.equal(rate.weiPerHour(PAYMASTER), undefined);
});

test('the first op time is read once spend appears, and then kept', async () => {
  let now = 100 * HOUR + 30 * 60_000;
  const l = ledger([], undefined);
  const rate = createDepositSpendRate({ source: l.source, now: () => now });
  await rate.refresh(PAYMASTER);
  l.rows.push({ hour: 100, wei: 2_000n });
  const first = 100 * HOUR + 10 * 60_000;
  l.source.firstAt = async () => {
    l.calls.firstAt++;
    return first;
  };
  await rate.refresh(PAYMASTER);
  // 2,000 wei over the hour since the first op (at least an hour).
  assert.equal(rate.weiPerHour(PAYMASTER), 2_000n);
  now += 20 * 60_000;
  await rate.refresh(PAYMASTER);
  assert.deepEqual(l.calls, { byHour: 3, firstAt: 1 });
});
