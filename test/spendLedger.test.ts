import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { ChainWindow, LedgerCharge } from '../src/store/ledger/spendLedgerRepository.js';
import { openStore, type Store } from '../src/store/store.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore, TEST_DATABASE_URL } from './helpers/testContext.js';

/**
 * The spend ledger on the configured back end: all-or-none reservations, settlement by the actual cost,
 * release, expiry, and the concurrency guarantee: 200 concurrent reservations against a cap that admits N
 * reserve exactly N, in one process and split over two processes on one database (an SQLite file, or the
 * PostgreSQL schema).
 */
let store: Store;
let schema: string | undefined;
let dappId: string;
let n = 0;
const key = () => `test|${++n}|${randomUUID()}`;

before(async () => {
  ({ store, schema } = await openTestStore());
  dappId = await insertBareDapp(store, 'ledger');
});
after(async () => {
  await store.close();
  await dropTestSchema(schema);
});

const charge = (k: string, amount: bigint, limit: bigint, unit: LedgerCharge['unit'] = 'wei'): LedgerCharge => ({
  key: k,
  unit,
  amount,
  limit,
  windowEnd: undefined,
});

const PAYMASTER = '0x00000000000000000000000000000000000000aa';
const OTHER = '0x00000000000000000000000000000000000000bb';

const reserve = (
  charges: readonly LedgerCharge[],
  over: {
    id?: string;
    expiresAt?: number;
    on?: Store;
    window?: ChainWindow;
    paymaster?: string;
    policyVersion?: number;
  } = {},
) =>
  (over.on ?? store).spendLedger.reserve({
    id: over.id ?? randomUUID(),
    dappId,
    chainId: 31337,
    userOpHash: undefined,
    charges,
    expiresAt: over.expiresAt ?? Date.now() + 60_000,
    now: Date.now(),
    window: over.window ?? { unit: 'seconds', until: 4_000_000_000 },
    paymaster: over.paymaster ?? PAYMASTER,
    ...(over.policyVersion === undefined ? {} : { policyVersion: over.policyVersion }),
  });

const state = async (k: string) => (await store.spendLedger.counters([k])).get(k);

describe(`spend ledger (${BACKEND})`, () => {
  test('reserves within the cap; the charge that does not fit is named with what is used and reserved', async () => {
    const k = key();
    assert.deepEqual(await reserve([charge(k, 60n, 100n)]), { ok: true });
    assert.deepEqual(await state(k), { used: 0n, reserved: 60n });
    const refused = await reserve([charge(k, 41n, 100n)]);
    assert.deepEqual(refused, { ok: false, charge: charge(k, 41n, 100n), used: 0n, reserved: 60n });
    assert.deepEqual(await reserve([charge(k, 40n, 100n)]), { ok: true }, 'exactly up to the limit');
    assert.deepEqual(await state(k), { used: 0n, reserved: 100n });
  });

  test('all or none: a second cap that does not fit leaves the first untouched', async () => {
    const [a, b] = [key(), key()];
    await reserve([charge(b, 9n, 10n, 'ops')]);
    const r = await reserve([charge(a, 5n, 100n), charge(b, 2n, 10n, 'ops')]);
    assert.equal(r.ok, false);
    // Untouched: no reservation (the row may not even exist: SQLite rolls its creation back with the refusal).
    assert.equal(await state(a).then((s) => s?.reserved ?? 0n), 0n);
    assert.equal(await state(b).then((s) => s?.reserved), 9n);
  });

  test('one id reserved twice (the same op signed twice), at once or later, is counted once', async () => {
    const k = key();
    const id = randomUUID();
    // At once (one batch on SQLite) and then again: every attempt answers ok, the counter moves once.
    const both = await Promise.all([reserve([charge(k, 10n, 100n)], { id }), reserve([charge(k, 10n, 100n)], { id })]);
    assert.deepEqual(both, [{ ok: true }, { ok: true }]);
    assert.deepEqual(await reserve([charge(k, 10n, 100n)], { id }), { ok: true });
    assert.deepEqual(await state(k), { used: 0n, reserved: 10n });
  });

  test('amounts beyond 64 bits (1,000 ETH caps in wei) add up exactly', async () => {
    const k = key();
    const eth = 10n ** 18n;
    assert.deepEqual(await reserve([charge(k, 999n * eth, 1000n * eth)]), { ok: true });
    assert.deepEqual(await reserve([charge(k, eth, 1000n * eth)]), { ok: true });
    assert.equal((await reserve([charge(k, 1n, 1000n * eth)])).ok, false);
    assert.deepEqual(await state(k), { used: 0n, reserved: 1000n * eth });
  });

  test('settle replaces the reservation by the actual cost, per unit; only once', async () => {
    const [w, u, o] = [key(), key(), key()];
    const id = randomUUID();
    await reserve([charge(w, 1000n, 10_000n), charge(u, 500n, 10_000n, 'usd'), charge(o, 1n, 5n, 'ops')], { id });
    assert.equal(await store.spendLedger.settle({ id, actualWei: 300n, actualUsdMicros: 150n, now: Date.now() }), true);
    assert.deepEqual(await state(w), { used: 300n, reserved: 0n });
    assert.deepEqual(await state(u), { used: 150n, reserved: 0n });
    assert.deepEqual(await state(o), { used: 1n, reserved: 0n });
    assert.equal(
      await store.spendLedger.settle({ id, actualWei: 300n, actualUsdMicros: 150n, now: Date.now() }),
      false,
    );
    assert.equal(
      await store.spendLedger.release({ id, now: Date.now() }),
      false,
      'a settled reservation stays settled',
    );
    assert.deepEqual(await state(w), { used: 300n, reserved: 0n });
  });

  test('an op included after its reservation was released still counts, once', async () => {
    const k = key();
    const id = randomUUID();
    await reserve([charge(k, 1000n, 10_000n)], { id, expiresAt: Date.now() - 1 });
    assert.equal(await store.spendLedger.release({ id, now: Date.now() }), true);
    assert.deepEqual(await state(k), { used: 0n, reserved: 0n });
    const settle = () => store.spendLedger.settle({ id, actualWei: 700n, actualUsdMicros: undefined, now: Date.now() });
    assert.equal(await settle(), true);
    assert.deepEqual(await state(k), { used: 700n, reserved: 0n }, 'the cost added, nothing released twice');
    assert.equal(await settle(), false);
    assert.deepEqual(await state(k), { used: 700n, reserved: 0n });
  });

  test('a negative amount or limit is refused before anything is written', async () => {
    const k = key();
    await assert.rejects(reserve([charge(k, -5n, 10n)]), /negative/);
    assert.equal(await state(k), undefined);
  });

  test('release frees the whole reservation; releaseClosed frees only open ones whose window the chain passed', async () => {
    const k = key();
    const kept = randomUUID();
    const gone = randomUUID();
    const closed = randomUUID();
    const blocks = randomUUID();
    const otherPaymaster = randomUUID();
    const t = 2_000_000_000;
    await reserve([charge(k, 10n, 1000n)], { id: kept, window: { unit: 'seconds', until: t + 100 } });
    await reserve([charge(k, 20n, 1000n)], { id: gone });
    await reserve([charge(k, 30n, 1000n)], { id: closed, window: { unit: 'seconds', until: t } });
    await reserve([charge(k, 40n, 1000n)], { id: blocks, window: { unit: 'blocks', until: 500 } });
    await reserve([charge(k, 50n, 1000n)], {
      id: otherPaymaster,
      window: { unit: 'seconds', until: t },
      paymaster: OTHER,
    });
    assert.equal(await store.spendLedger.release({ id: gone, now: Date.now() }), true);
    assert.deepEqual(await state(k), { used: 0n, reserved: 130n });
    const at = (cursorBlock: bigint, cursorTimestamp: bigint) =>
      store.spendLedger.releaseClosed({
        chainId: 31337,
        paymaster: PAYMASTER,
        cursorBlock,
        cursorTimestamp,
        now: Date.now(),
      });
    // The server's clock is long past every window: only the chain's cursor counts. At validUntil the op is valid.
    assert.equal(await at(500n, BigInt(t)), 0, 'the cursor block at validUntil, and at the last block: still open');
    assert.equal(await at(501n, BigInt(t)), 1, 'the block window: past its last block');
    assert.equal(await at(501n, BigInt(t + 1)), 1, 'the time window: the cursor block after validUntil');
    assert.equal(await at(501n, BigInt(t + 1)), 0, 'released once');
    assert.deepEqual(await state(k), { used: 0n, reserved: 60n }, 'the other paymaster’s and the later window stay');
    assert.equal(
      await store.spendLedger.settle({ id: kept, actualWei: 7n, actualUsdMicros: undefined, now: Date.now() }),
      true,
    );
    assert.deepEqual(await state(k), { used: 7n, reserved: 50n });
  });

  test('one op key signed again: the ledger holds the largest worst case and the latest window', async () => {
    const k = key();
    const id = randomUUID();
    await reserve([charge(k, 10n, 100n)], { id, window: { unit: 'seconds', until: 1000 } });
    assert.deepEqual(await reserve([charge(k, 60n, 100n)], { id, window: { unit: 'seconds', until: 900 } }), {
      ok: true,
    });
    assert.deepEqual(await state(k), { used: 0n, reserved: 60n }, 'the difference reserved');
    const early = { id, window: { unit: 'seconds', until: 1000 } } as const;
    assert.deepEqual(await reserve([charge(k, 30n, 100n)], early), { ok: true }, 'a smaller one adds nothing');
    assert.deepEqual(await state(k), { used: 0n, reserved: 60n });
    const refused = await reserve([charge(k, 101n, 100n)], early);
    assert.deepEqual(refused, { ok: false, charge: charge(k, 101n, 100n), used: 0n, reserved: 60n });
    // The window is the later of both: a cursor past 900 but not past 1000 releases nothing.
    const at = (cursorTimestamp: bigint) =>
      store.spendLedger.releaseClosed({
        chainId: 31337,
        paymaster: PAYMASTER,
        cursorBlock: 1n,
        cursorTimestamp,
        now: 0,
      });
    assert.equal(await at(950n), 0);
    assert.equal(await at(1001n), 1);
    assert.deepEqual(await state(k), { used: 0n, reserved: 0n });
    // Released, then signed again: reopened with this request's worst case, checked against the cap in full.
    await reserve([charge(k, 70n, 100n)]);
    const again = await reserve([charge(k, 40n, 100n)], { id, window: { unit: 'seconds', until: 2000 } });
    assert.deepEqual(again, { ok: false, charge: charge(k, 40n, 100n), used: 0n, reserved: 70n });
    assert.deepEqual(await reserve([charge(k, 30n, 100n)], { id, window: { unit: 'seconds', until: 2000 } }), {
      ok: true,
    });
    assert.deepEqual(await state(k), { used: 0n, reserved: 100n });
    assert.equal(await at(1500n), 0, 'the reopened reservation has the new window');
    assert.equal(await store.spendLedger.settle({ id, actualWei: 25n, actualUsdMicros: undefined, now: 0 }), true);
    assert.deepEqual(await state(k), { used: 25n, reserved: 70n });
    assert.deepEqual(await reserve([charge(k, 90n, 100n)], { id }), { ok: true }, 'settled: its nonce is spent');
    assert.deepEqual(await state(k), { used: 25n, reserved: 70n });
  });

  test('a new cap key on a re-signed op is reserved beside the held ones', async () => {
    const [a, b] = [key(), key()];
    const id = randomUUID();
    await reserve([charge(a, 10n, 100n)], { id });
    assert.deepEqual(await reserve([charge(a, 20n, 100n), charge(b, 5n, 5n)], { id }), { ok: true });
    assert.deepEqual(
      [await state(a), await state(b)],
      [
        { used: 0n, reserved: 20n },
        { used: 0n, reserved: 5n },
      ],
    );
    assert.equal(await store.spendLedger.settle({ id, actualWei: 3n, actualUsdMicros: undefined, now: 0 }), true);
    assert.deepEqual(
      [await state(a), await state(b)],
      [
        { used: 3n, reserved: 0n },
        { used: 3n, reserved: 0n },
      ],
    );
  });

  test('a policy version that moved refuses the reservation whole; the current one reserves', async () => {
    const k = key();
    const policyId = randomUUID();
    const t = Date.now();
    const policy = { id: policyId, dappId, name: `v${n}`, active: true, rules: {}, createdAt: t, updatedAt: t };
    assert.equal(await store.policies.insert(policy), 'created');
    const v = await store.policies.version(dappId);
    assert.ok(v >= 1);
    await store.policies.update({ dappId, policyId, active: false, now: t });
    assert.equal(await store.policies.version(dappId), v + 1, 'every write moves it');
    assert.deepEqual(await reserve([charge(k, 5n, 100n)], { policyVersion: v }), { ok: false, policyVersion: v + 1 });
    assert.equal(await state(k).then((s) => s?.reserved ?? 0n), 0n);
    assert.deepEqual(await reserve([charge(k, 5n, 100n)], { policyVersion: v + 1 }), { ok: true });
    assert.equal(await store.policies.delete({ dappId, policyId }), true);
    assert.equal(await store.policies.version(dappId), v + 2);
  });

  test('200 concurrent signatures of one op key, each another worst case, against a cap of 150 wei', async () => {
    const k = key();
    const id = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => reserve([charge(k, BigInt(i + 1), 150n)], { id })),
    );
    // Whatever the order: every worst case up to the cap is signed, none above, and the ledger holds the largest.
    assert.deepEqual(
      results.flatMap((r, i) => (r.ok ? [i + 1] : [])),
      Array.from({ length: 150 }, (_, i) => i + 1),
    );
    assert.deepEqual(await state(k), { used: 0n, reserved: 150n });
  });

  test('200 concurrent reservations against a cap that admits 37: exactly 37', async () => {
    const k = key();
    const results = await Promise.all(Array.from({ length: 200 }, () => reserve([charge(k, 1n, 37n, 'ops')])));
    assert.equal(results.filter((r) => r.ok).length, 37);
    assert.deepEqual(await state(k), { used: 0n, reserved: 37n });
  });
});

describe(`spend ledger across two processes (${BACKEND})`, () => {
  let dir: string | undefined;
  let shared: Store;
  let sharedDapp: string;
  let args: string[];

  before(async () => {
    if (TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '') {
      dir = mkdtempSync(join(tmpdir(), 'patron-ledger-'));
      const file = join(dir, 'patron.sqlite');
      shared = await openStore({ storage: { kind: 'sqlite', file } });
      args = ['sqlite', file, ''];
    } else {
      shared = store;
      args = ['postgres', TEST_DATABASE_URL, schema ?? ''];
    }
    sharedDapp = await insertBareDapp(shared, 'ledger');
  });
  after(async () => {
    if (dir !== undefined) {
      await shared.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('100 reservations in each of two processes, at once, against a cap of 61: exactly 61', async () => {
    const k = key();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/helpers/ledgerWorker.ts', ...args, sharedDapp, k, '61', '100'],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const lines = createInterface({ input: child.stdout });
    const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
    assert.equal(await next(), 'ready');
    const childCount = next();
    child.stdin.end('go\n');
    const mine = await Promise.all(
      Array.from({ length: 100 }, () =>
        shared.spendLedger.reserve({
          id: randomUUID(),
          dappId: sharedDapp,
          chainId: 31337,
          userOpHash: undefined,
          charges: [charge(k, 1n, 61n, 'ops')],
          expiresAt: Date.now() + 60_000,
          now: Date.now(),
        }),
      ),
    );
    const theirs = Number(await childCount);
    const ours = mine.filter((r) => r.ok).length;
    assert.equal(ours + theirs, 61, `this process ${ours}, the other ${theirs}`);
    assert.deepEqual((await shared.spendLedger.counters([k])).get(k), { used: 0n, reserved: 61n });
    assert.equal(await exited, 0);
  });

  test('one op key signed 100 times in each of two processes, 1 to 200 wei, against a cap of 150: holds 150', async () => {
    const k = key();
    const id = randomUUID();
    // This process signs 1..100 wei, the other 101..200: the cap admits 1..150, and the ledger ends at the largest.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/helpers/ledgerWorker.ts', ...args, sharedDapp, k, '150', '100', id, '101'],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const lines = createInterface({ input: child.stdout });
    const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
    assert.equal(await next(), 'ready');
    const childResult = next();
    child.stdin.end('go\n');
    const mine = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        shared.spendLedger.reserve({
          id,
          dappId: sharedDapp,
          chainId: 31337,
          userOpHash: undefined,
          charges: [charge(k, BigInt(i + 1), 150n)],
          expiresAt: Date.now() + 60_000,
          now: Date.now(),
        }),
      ),
    );
    const [theirs, theirLargest] = (await childResult).split(' ');
    assert.equal(mine.filter((r) => r.ok).length, 100, 'every worst case below the cap is signed');
    assert.deepEqual([theirs, theirLargest], ['50', '150'], 'the other: 101 to 150');
    assert.deepEqual((await shared.spendLedger.counters([k])).get(k), { used: 0n, reserved: 150n });
    assert.equal(await exited, 0);
  });
});
