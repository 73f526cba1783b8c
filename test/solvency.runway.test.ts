import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Address, parseEther } from 'viem';
import type { SolvencySettings } from '../src/config/solvencySettings.js';
import { startSolvencyGuard } from '../src/solvency/solvencyGuard.js';
import type { Store } from '../src/store/store.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore } from './helpers/testContext.js';

/**
 * The one runway (docs/guides/operations.md, "Runway: one figure, computed one way"): the spend rate is what included
 * ops took from the deposit over the last 24 h, summed from the ledger (migration 0028's `deposit_wei`), so it is the
 * same for every guard on the database and survives a restart; withdrawals and top-ups are not spend; the runway is
 * the headroom above the floor over that rate.
 */
const HOUR = 3_600_000;
const PAYMASTER: Address = '0x00000000000000000000000000000000000000aa';
const OTHER: Address = '0x00000000000000000000000000000000000000bb';
const CHAIN = 31337;

const silent = { info() {}, warn() {}, error() {} };
const settings: SolvencySettings = {
  enabled: true,
  intervalMs: 3_600_000,
  trackedSignatures: 100_000,
  marginBps: 15_000n,
  floorWei: parseEther('1'),
  floorWeiByChain: new Map(),
  lowWaterWei: undefined,
  lowWaterWeiByChain: new Map(),
  alertHoldMs: 0,
  alert: undefined,
};

describe(`the runway from the ledger (${BACKEND})`, () => {
  let store: Store;
  let schema: string | undefined;
  let dappId: string;
  before(async () => {
    ({ store, schema } = await openTestStore());
    dappId = await insertBareDapp(store, 'runway');
  });
  after(async () => {
    await store.close();
    await dropTestSchema(schema);
  });

  /** One signed op of `paymaster`, reserved at `at` (unix ms): its id and op key. */
  async function reserved(args: { at: number; paymaster?: Address; kind?: 'sponsored' | 'guarantee' }) {
    const opKey = `0x${randomUUID().replaceAll('-', '').padEnd(64, '0')}`;
    const id = `${dappId}:${opKey}`;
    const r = await store.spendLedger.reserve({
      id,
      dappId,
      chainId: CHAIN,
      userOpHash: undefined,
      opKey,
      charges: [],
      expiresAt: args.at + 60_000,
      now: args.at,
      window: { unit: 'seconds', until: Math.floor(args.at / 1000) + 60 },
      paymaster: args.paymaster ?? PAYMASTER,
      kind: args.kind ?? 'sponsored',
    });
    assert.deepEqual(r, { ok: true });
    return { id, opKey };
  }
  /** A sponsored op included at `at`, the deposit charged `wei`. */
  async function included(args: { at: number; wei: bigint; paymaster?: Address }) {
    const { id } = await reserved(args);
    const ok = await store.spendLedger.settle({
      id,
      actualWei: args.wei,
      actualUsdMicros: undefined,
      now: args.at,
      paymaster: args.paymaster ?? PAYMASTER,
    });
    assert.equal(ok, true);
  }

  let deposit = parseEther('10');
  const guardAt = (clock: { now: number }) =>
    startSolvencyGuard({
      chains: [{ chainId: CHAIN, paymaster: PAYMASTER, readDeposit: async () => deposit }],
      settings,
      enforce: true,
      alert: undefined,
      logger: silent,
      now: () => clock.now,
      spend: store.depositSpend,
    });

  test('the ledger sums what included ops took from the deposit, exactly, per hour and per paymaster', async () => {
    const t0 = 1_900_000_000_000 - (1_900_000_000_000 % HOUR);
    // Past 9.2 ETH: SQLite's 64-bit sum() would fail on wei.
    await included({ at: t0 + 1, wei: parseEther('7') });
    await included({ at: t0 + 2, wei: parseEther('5') + 3n });
    await included({ at: t0 + HOUR + 5, wei: 11n });
    await included({ at: t0 + 5, wei: parseEther('1'), paymaster: OTHER });
    // Signed, never included: no spend.
    await reserved({ at: t0 + 6 });
    const hours = await store.depositSpend.byHour({ chainId: CHAIN, paymaster: PAYMASTER, since: t0 });
    assert.deepEqual(
      [...hours].sort((a, b) => a.hour - b.hour),
      [
        { hour: t0 / HOUR, wei: parseEther('12') + 3n },
        { hour: t0 / HOUR + 1, wei: 11n },
      ],
    );
    assert.equal(await store.depositSpend.firstAt({ chainId: CHAIN, paymaster: PAYMASTER }), t0 + 1);
    assert.equal(
      await store.depositSpend.firstAt({ chainId: CHAIN, paymaster: '0x00000000000000000000000000000000000000cc' }),
      undefined,
    );
  });

  test('a token-mode op its user paid for is spend of the deposit; the dApp ledger still shows no actual cost', async () => {
    const t0 = 1_950_000_000_000 - (1_950_000_000_000 % HOUR);
    const { id, opKey } = await reserved({ at: t0, kind: 'guarantee' });
    const settled = await store.spendLedger.settleUserOp({
      chainId: CHAIN,
      userOpHash: `0x${'ab'.repeat(32)}`,
      opKey,
      actualWei: 777n,
      actualUsdMicros: undefined,
      now: t0 + 10,
      paymaster: PAYMASTER,
      paidByUser: async () => true,
      block: { number: 7n, hash: `0x${'ef'.repeat(32)}` },
      included: { txHash: `0x${'cd'.repeat(32)}`, success: true },
    });
    assert.equal(settled.settled, true);
    const item = (await store.ledger.list({ filter: { dappId }, limit: 500 })).find((i) => i.id === id);
    assert.deepEqual([item?.status, item?.actualWei], ['paid_by_user', null]);
    assert.deepEqual(await store.depositSpend.byHour({ chainId: CHAIN, paymaster: PAYMASTER, since: t0 }), [
      { hour: t0 / HOUR, wei: 777n },
    ]);
  });

  test('one rate for every guard on the database, kept across a restart; a withdrawal shortens the runway, is not spend', async () => {
    const clock = { now: 2_000_000_000_000 - (2_000_000_000_000 % HOUR) + 30 * 60_000 };
    deposit = parseEther('10');
    let guard = guardAt(clock);
    try {
      let [s] = await guard.checkNow();
      assert.deepEqual([s?.spendWeiPerHour, s?.runwaySeconds], [undefined, undefined], 'no spend, no runway');

      // 0.6 ETH included over the last 6 hours (this paymaster's first op over a day ago): 0.025 ETH an hour.
      await included({ at: clock.now - 30 * HOUR, wei: parseEther('9') });
      await included({ at: clock.now - 6 * HOUR, wei: parseEther('0.4') });
      await included({ at: clock.now - 10_000, wei: parseEther('0.2') });
      // Another paymaster's spend is not this one's.
      await included({ at: clock.now - 10_000, wei: parseEther('50'), paymaster: OTHER });
      await guard.close();

      // A new process (a restart, or another instance): the same figures from the same ledger.
      guard = guardAt(clock);
      [s] = await guard.checkNow();
      const rate = parseEther('0.6') / 24n;
      assert.equal(s?.spendWeiPerHour, rate);
      // Headroom 10 ETH (nothing signed), floor 1 ETH: 9 ETH at 0.025 ETH/h is 360 h.
      assert.equal(s?.runwaySeconds, 360 * 3600);

      // The owner withdraws 6 ETH: the rate stays what the ops spent; the runway is what is left above the floor.
      deposit = parseEther('4');
      clock.now += 15 * 60_000;
      [s] = await guard.checkNow();
      assert.equal(s?.spendWeiPerHour, rate, 'a withdrawal is not spend');
      assert.equal(s?.runwaySeconds, 120 * 3600);
      // A top-up is not negative spend either.
      deposit = parseEther('25');
      clock.now += 15 * 60_000;
      [s] = await guard.checkNow();
      assert.equal(s?.spendWeiPerHour, rate);
      assert.equal(s?.runwaySeconds, 960 * 3600);

      // An op included now: counted at once by the instance that settled it, and the next read of the ledger
      // (which holds it) gives the same figure, not twice.
      await included({ at: clock.now, wei: parseEther('2.4') });
      const sender: Address = '0x0000000000000000000000000000000000a77ac4';
      guard.observeIncluded({
        chainId: CHAIN,
        paymaster: PAYMASTER,
        sender,
        nonce: 0n,
        actualGasCost: parseEther('2.4'),
      });
      [s] = guard.state();
      assert.equal(s?.spendWeiPerHour, parseEther('3') / 24n);
      clock.now += 60_000;
      [s] = await guard.checkNow();
      assert.equal(s?.spendWeiPerHour, parseEther('3') / 24n);
      assert.equal(s?.runwaySeconds, 192 * 3600);

      // A day and more later, nothing spent since: the window is empty again.
      clock.now += 25 * HOUR;
      [s] = await guard.checkNow();
      assert.deepEqual([s?.spendWeiPerHour, s?.runwaySeconds], [undefined, undefined]);
    } finally {
      await guard.close();
    }
  });

  test('a new paymaster: its rate over the time since its first op (an hour at least), not over a whole day', async () => {
    const fresh: Address = '0x00000000000000000000000000000000000000dd';
    const clock = { now: 2_100_000_000_000 };
    // Closed before this process started (the guard's first read takes the whole window; later ones the last hour).
    await included({ at: clock.now - 4 * HOUR, wei: parseEther('0.2'), paymaster: fresh });
    await included({ at: clock.now - 60_000, wei: parseEther('0.2'), paymaster: fresh });
    const guard = startSolvencyGuard({
      chains: [{ chainId: CHAIN, paymaster: fresh, readDeposit: async () => parseEther('3') }],
      settings,
      enforce: true,
      alert: undefined,
      logger: silent,
      now: () => clock.now,
      spend: store.depositSpend,
    });
    try {
      const [s] = await guard.checkNow();
      assert.equal(s?.spendWeiPerHour, parseEther('0.1'));
      // 3 ETH − 1 ETH floor at 0.1 ETH/h.
      assert.equal(s?.runwaySeconds, 20 * 3600);
    } finally {
      await guard.close();
    }
  });

  test('the ledger unreadable: the last rate stands, logged once; readable again, logged once', async () => {
    const lines: string[] = [];
    const logger = {
      info: (_: object, m: string) => lines.push(m),
      warn: (_: object, m: string) => lines.push(m),
      error() {},
    };
    let broken = false;
    const clock = { now: 2_000_000_000_000 - (2_000_000_000_000 % HOUR) + 30 * 60_000 };
    const guard = startSolvencyGuard({
      chains: [{ chainId: CHAIN, paymaster: PAYMASTER, readDeposit: async () => parseEther('10') }],
      settings,
      enforce: true,
      alert: undefined,
      logger,
      now: () => clock.now,
      spend: {
        byHour: (a) => (broken ? Promise.reject(new Error('disk I/O error')) : store.depositSpend.byHour(a)),
        firstAt: (a) => store.depositSpend.firstAt(a),
      },
    });
    try {
      const [first] = await guard.checkNow();
      assert.ok(first?.spendWeiPerHour !== undefined && first.spendWeiPerHour > 0n);
      broken = true;
      for (let i = 0; i < 3; i++) {
        const [s] = await guard.checkNow();
        assert.equal(s?.spendWeiPerHour, first?.spendWeiPerHour);
      }
      broken = false;
      await guard.checkNow();
      assert.deepEqual(
        lines.filter((l) => l.includes('spend rate')),
        ['solvency: could not read the spend rate', 'solvency: the spend rate is readable again'],
      );
    } finally {
      await guard.close();
    }
  });
});
