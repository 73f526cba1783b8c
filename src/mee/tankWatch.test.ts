import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Address } from 'viem';
import type { AlertMessage } from '../solvency/alertWebhook.js';
import { type MeeTankLike, startTankWatch, type TankWatchDeps, tankLowMark } from './tankWatch.js';

const TANK = '0x00000000000000000000000000000000000000a1' as Address;
const USDC = '0x00000000000000000000000000000000000000c0' as Address;
const HOLD_MS = 300_000;
const usdc = (whole: number) => BigInt(Math.round(whole * 1e6));

function tank(over: Partial<MeeTankLike> = {}): MeeTankLike {
  return {
    id: 'tank_1',
    dappId: 'dapp_1',
    chainId: 8453,
    address: TANK,
    token: USDC,
    tokenDecimals: 6,
    status: 'active',
    lowBalance: usdc(100),
    ...over,
  };
}

/** A watch on fakes: balances and spend per tank id the test sets, alerts collected, a clock it moves. */
function harness(args: { tanks: MeeTankLike[]; runwayFloorSeconds?: number }) {
  const balances = new Map<string, bigint | Error | undefined>();
  const spend = new Map<string, bigint>();
  const alerts: AlertMessage[] = [];
  const reads: string[] = [];
  let now = 1_000_000;
  const deps: TankWatchDeps = {
    listTanks: async () => args.tanks,
    async readBalance({ holder, chainId }) {
      reads.push(`${chainId}:${holder}`);
      const t = args.tanks.find((x) => x.address === holder && x.chainId === chainId);
      const b = t === undefined ? undefined : balances.get(t.id);
      if (b instanceof Error) throw b;
      return b;
    },
    tankSpend24h: async (id) => spend.get(id),
    // The loop's own timer never fires within a test: rounds run by runOnce.
    settings: { checkMs: 3_600_000, runwayFloorSeconds: args.runwayFloorSeconds ?? 86_400, alertHoldMs: HOLD_MS },
    alert: {
      async send(m) {
        alerts.push(m);
        return true;
      },
    },
    logger: { warn: () => undefined, error: () => undefined },
    now: () => now,
  };
  const watch = startTankWatch(deps);
  return {
    watch,
    balances,
    spend,
    alerts,
    reads,
    tick: (ms: number) => {
      now += ms;
    },
  };
}

describe('tankLowMark', () => {
  test('the threshold, or what lasts the runway floor at the 24 h spend, whichever is higher', () => {
    assert.equal(tankLowMark({ lowBalance: 100n, spend24h: undefined, runwayFloorSeconds: 86_400 }), 100n);
    assert.equal(tankLowMark({ lowBalance: undefined, spend24h: 240n, runwayFloorSeconds: 86_400 }), 240n);
    assert.equal(tankLowMark({ lowBalance: undefined, spend24h: 240n, runwayFloorSeconds: 3_600 }), 10n);
    // Rounded up: a balance under the mark is exactly one whose runway is under the floor.
    assert.equal(tankLowMark({ lowBalance: undefined, spend24h: 241n, runwayFloorSeconds: 3_600 }), 11n);
    assert.equal(tankLowMark({ lowBalance: 500n, spend24h: 240n, runwayFloorSeconds: 3_600 }), 500n);
    assert.equal(tankLowMark({ lowBalance: undefined, spend24h: 240n, runwayFloorSeconds: 0 }), 0n);
  });
});

describe('the tank watch', () => {
  test('no tank: nothing read, nothing shown', async () => {
    const h = harness({ tanks: [] });
    await h.watch.runOnce();
    assert.deepEqual(h.reads, []);
    assert.deepEqual(h.watch.state(), []);
    await h.watch.close();
  });

  test('reads each active tank’s balance and runway; a retired tank is not read', async () => {
    const h = harness({ tanks: [tank(), tank({ id: 'tank_2', address: `0x${'b2'.repeat(20)}`, status: 'retired' })] });
    h.balances.set('tank_1', usdc(1000));
    h.balances.set('tank_2', usdc(5));
    h.spend.set('tank_1', usdc(250));
    await h.watch.runOnce();
    assert.deepEqual(h.reads, [`8453:${TANK}`]);
    const [s] = h.watch.state();
    assert.equal(h.watch.state().length, 1);
    assert.equal(s?.balance, usdc(1000));
    assert.equal(s?.runwaySeconds, 4 * 86_400);
    assert.equal(s?.low, false);
    assert.deepEqual(h.alerts, []);
    await h.watch.close();
  });

  test('under its threshold: one `mee.tank.low`, held until the balance stays 10 % clear for the hold', async () => {
    const h = harness({ tanks: [tank()] });
    h.balances.set('tank_1', usdc(99));
    await h.watch.runOnce();
    await h.watch.runOnce();
    assert.deepEqual(
      h.alerts.map((a) => a.type),
      ['mee.tank.low'],
    );
    const data = h.alerts[0]?.data ?? {};
    assert.equal(data.tank, TANK);
    assert.equal(data.chainId, 8453);
    assert.equal(data.balance, '99000000');
    assert.equal(data.reason, 'threshold');
    assert.match(String(data.summary), /99 of token .* under its threshold 100/);
    assert.equal(h.watch.state()[0]?.low, true);
    // Back over the mark, not 10 % over: still low.
    h.balances.set('tank_1', usdc(105));
    h.tick(HOLD_MS * 2);
    await h.watch.runOnce();
    assert.equal(h.watch.state()[0]?.low, true);
    // 10 % over, but not yet for the hold.
    h.balances.set('tank_1', usdc(111));
    await h.watch.runOnce();
    h.tick(HOLD_MS - 1);
    await h.watch.runOnce();
    assert.equal(h.watch.state()[0]?.low, true);
    h.tick(1);
    await h.watch.runOnce();
    assert.equal(h.watch.state()[0]?.low, false);
    assert.deepEqual(
      h.alerts.map((a) => [a.type, a.silent === true]),
      [
        ['mee.tank.low', false],
        ['mee.tank.ok', true],
      ],
    );
    // Re-armed: the next dip is posted again.
    h.balances.set('tank_1', usdc(1));
    await h.watch.runOnce();
    assert.equal(h.alerts.at(-1)?.type, 'mee.tank.low');
    await h.watch.close();
  });

  test('over its threshold but with under a day of runway at its 24 h spend: low, for the runway', async () => {
    const h = harness({ tanks: [tank()] });
    h.balances.set('tank_1', usdc(1000));
    h.spend.set('tank_1', usdc(999));
    await h.watch.runOnce();
    assert.equal(h.alerts.length, 0);
    h.spend.set('tank_1', usdc(1001));
    await h.watch.runOnce();
    assert.equal(h.alerts[0]?.type, 'mee.tank.low');
    assert.equal(h.alerts[0]?.data.reason, 'runway');
    assert.equal(h.watch.state()[0]?.runwaySeconds, Math.floor((1000 / 1001) * 86_400));
    await h.watch.close();
  });

  test('without threshold nor spend a tank never alerts, even empty', async () => {
    const h = harness({ tanks: [tank({ lowBalance: undefined })] });
    h.balances.set('tank_1', 0n);
    await h.watch.runOnce();
    assert.deepEqual(h.alerts, []);
    assert.equal(h.watch.state()[0]?.runwaySeconds, undefined);
    await h.watch.close();
  });

  test('one tank’s chain failing keeps its last figures; the others are read; an unserved chain is skipped', async () => {
    const other = tank({ id: 'tank_2', address: `0x${'b2'.repeat(20)}`, chainId: 10 });
    const unserved = tank({ id: 'tank_3', address: `0x${'b3'.repeat(20)}`, chainId: 999 });
    const h = harness({ tanks: [tank(), other, unserved] });
    h.balances.set('tank_1', usdc(500));
    h.balances.set('tank_2', usdc(700));
    await h.watch.runOnce();
    h.balances.set('tank_1', new Error('RPC down'));
    h.balances.set('tank_2', usdc(600));
    await h.watch.runOnce();
    const byId = new Map(h.watch.state().map((s) => [s.tankId, s.balance]));
    assert.deepEqual(
      [...byId],
      [
        ['tank_1', usdc(500)],
        ['tank_2', usdc(600)],
      ],
    );
    await h.watch.close();
  });

  test('a tank retired while low leaves the figures and ends its alert (silently)', async () => {
    const tanks = [tank()];
    const h = harness({ tanks });
    h.balances.set('tank_1', usdc(1));
    await h.watch.runOnce();
    tanks[0] = tank({ status: 'retired' });
    await h.watch.runOnce();
    assert.deepEqual(h.watch.state(), []);
    assert.deepEqual(
      h.alerts.map((a) => [a.type, a.silent === true]),
      [
        ['mee.tank.low', false],
        ['mee.tank.ok', true],
      ],
    );
    await h.watch.close();
  });
});
