import assert from 'node:assert/strict';
import { test } from 'node:test';
import { guaranteeCapCharge, guaranteeCapUsage, guaranteeLedgerKey } from './guaranteeCap.js';

const DAPP = '6f1c2b9e-3f4a-4d6b-9a57-1b2c3d4e5f60';
const at = (iso: string) => Date.parse(iso);

test('the charge: the worst case in wei against the cap, on the row of the dApp and the current calendar window', () => {
  const c = guaranteeCapCharge({
    dappId: DAPP,
    cap: { limitWei: '50000000000000000', resets: 'daily' },
    worstCaseWei: 1_234n,
    nowMs: at('2026-11-25T07:30:00Z'),
  });
  const start = at('2026-11-25T00:00:00Z');
  assert.deepEqual(c, {
    key: `guarantee:${DAPP}:daily:${start}`,
    unit: 'wei',
    amount: 1_234n,
    limit: 50_000_000_000_000_000n,
    windowEnd: at('2026-11-26T00:00:00Z'),
    window: { start, end: at('2026-11-26T00:00:00Z') },
  });
  // Another window, another cycle: another row; a never-resetting cap has one row and no end.
  assert.notEqual(
    guaranteeCapCharge({
      dappId: DAPP,
      cap: { limitWei: '1', resets: 'daily' },
      worstCaseWei: 1n,
      nowMs: at('2026-11-26T00:00:00Z'),
    }).key,
    c.key,
  );
  const never = guaranteeCapCharge({
    dappId: DAPP,
    cap: { limitWei: '1', resets: 'never' },
    worstCaseWei: 1n,
    nowMs: 5,
  });
  assert.equal(never.key, guaranteeLedgerKey({ dappId: DAPP, resets: 'never', windowStart: 0 }));
  assert.equal(never.windowEnd, undefined);
});

test('the usage reads the current window’s row only; an unused window reads zero', async () => {
  const asked: string[][] = [];
  const cap = { limitWei: '100', resets: 'weekly' } as const;
  const nowMs = at('2026-11-25T07:30:00Z'); // a Wednesday: the week began on Monday the 23rd
  const key = guaranteeLedgerKey({ dappId: DAPP, resets: 'weekly', windowStart: at('2026-11-23T00:00:00Z') });
  const usage = await guaranteeCapUsage({
    dappId: DAPP,
    cap,
    nowMs,
    counters: async (keys) => {
      asked.push([...keys]);
      return new Map([[key, { used: 40n, reserved: 25n }]]);
    },
  });
  assert.deepEqual(asked, [[key]]);
  assert.deepEqual(usage, {
    limitWei: '100',
    resets: 'weekly',
    usedWei: '40',
    reservedWei: '25',
    windowStart: at('2026-11-23T00:00:00Z'),
    windowEnd: at('2026-11-30T00:00:00Z'),
  });
  const empty = await guaranteeCapUsage({ dappId: DAPP, cap, nowMs, counters: async () => new Map() });
  assert.equal(empty.usedWei, '0');
  assert.equal(empty.reservedWei, '0');
});
