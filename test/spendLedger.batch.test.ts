import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { MAX_BATCH } from '../src/store/ledger/pgReserveBatch.js';
import type { LedgerCharge, ReserveResult } from '../src/store/ledger/spendLedgerRepository.js';
import type { Store } from '../src/store/store.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore } from './helpers/testContext.js';

/**
 * PostgreSQL's batched reservations (store/ledger/pgReserveBatch.ts), through the ledger as the policy gate calls it: the
 * requests that wait in one process share a transaction, and each is still decided on its own (all its charges or
 * none, in arrival order, exact at the cap); what a batch cannot decide goes alone (an id twice, an id already
 * reserved, every request of a batch whose transaction failed). On SQLite the ledger has no batches; the same
 * checks hold there too and run as well.
 */
let store: Store;
let schema: string | undefined;
let dappId: string;

before(async () => {
  ({ store, schema } = await openTestStore());
  dappId = await insertBareDapp(store, 'batched ledger');
});
after(async () => {
  await store.close();
  await dropTestSchema(schema);
});

const charge = (key: string, amount: bigint, limit: bigint): LedgerCharge => ({
  key,
  unit: 'ops',
  amount,
  limit,
  windowEnd: undefined,
});

const reserve = (
  charges: readonly LedgerCharge[],
  over: { id?: string; dapp?: string; policyVersion?: number; jti?: string } = {},
) =>
  store.spendLedger.reserve({
    id: over.id ?? randomUUID(),
    dappId: over.dapp ?? dappId,
    chainId: 31337,
    userOpHash: undefined,
    charges,
    expiresAt: Date.now() + 60_000,
    now: Date.now(),
    window: { unit: 'seconds', until: 4_000_000_000 },
    paymaster: '0x00000000000000000000000000000000000000aa',
    ...(over.policyVersion === undefined ? {} : { policyVersion: over.policyVersion }),
    ...(over.jti === undefined
      ? {}
      : { tokenUse: { jti: over.jti, expiresAt: Math.floor(Date.now() / 1000) + 600, nowSeconds: nowSeconds() } }),
  });

const nowSeconds = () => Math.floor(Date.now() / 1000);

const counter = async (key: string) => (await store.spendLedger.counters([key])).get(key);

describe(`reservations under concurrency, batched on PostgreSQL (${BACKEND})`, () => {
  test(`${MAX_BATCH + 100} at once against a cap of 150, two charges each: exactly 150, all-or-none, in arrival order`, async () => {
    const cap = `batch|cap|${randomUUID()}`;
    const wide = `batch|wide|${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: MAX_BATCH + 100 }, () => reserve([charge(cap, 1n, 150n), charge(wide, 1n, 100_000n)])),
    );
    const ok = results.filter((r) => r.ok).length;
    assert.equal(ok, 150);
    for (const r of results.filter((x): x is Extract<ReserveResult, { charge: LedgerCharge }> => 'charge' in x)) {
      assert.equal(r.charge.key, cap, 'the cap refused them, naming its counter');
      assert.equal(r.used + r.reserved, 150n);
    }
    assert.deepEqual(await counter(cap), { used: 0n, reserved: 150n });
    // A refused request moved none of its charges: the wide counter holds exactly the accepted ones.
    assert.deepEqual(await counter(wide), { used: 0n, reserved: 150n });
  });

  test('the same id twice at once is one reservation, the larger; a later request does not see the merge twice', async () => {
    const cap = `batch|dup|${randomUUID()}`;
    const id = randomUUID();
    const [a, b] = await Promise.all([
      reserve([charge(cap, 3n, 10n)], { id }),
      reserve([charge(cap, 5n, 10n)], { id }),
    ]);
    assert.deepEqual([a, b], [{ ok: true }, { ok: true }]);
    assert.deepEqual(await counter(cap), { used: 0n, reserved: 5n }, 'held once, at the larger worst case');
    assert.deepEqual(await reserve([charge(cap, 5n, 10n)]), { ok: true });
    assert.equal((await reserve([charge(cap, 1n, 10n)])).ok, false);
  });

  test('a policy version that moved refuses only its own requests of the batch', async () => {
    const cap = `batch|version|${randomUUID()}`;
    const version = await store.policies.version(dappId);
    const results = await Promise.all([
      reserve([charge(cap, 1n, 10n)], { policyVersion: version }),
      reserve([charge(cap, 1n, 10n)], { policyVersion: version + 7 }),
      reserve([charge(cap, 1n, 10n)]),
    ]);
    assert.deepEqual(results, [{ ok: true }, { ok: false, policyVersion: version }, { ok: true }]);
    assert.deepEqual(await counter(cap), { used: 0n, reserved: 2n });
  });

  test('one request the database refuses (a dApp that does not exist) fails alone; the others of its batch reserve', async () => {
    const cap = `batch|fk|${randomUUID()}`;
    const settled = await Promise.allSettled([
      reserve([charge(cap, 1n, 10n)]),
      reserve([charge(`batch|ghost|${randomUUID()}`, 1n, 10n)], { dapp: randomUUID() }),
      reserve([charge(cap, 1n, 10n)]),
    ]);
    assert.deepEqual(
      settled.map((s) => s.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(
      settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])),
      [{ ok: true }, { ok: true }],
    );
    assert.deepEqual(await counter(cap), { used: 0n, reserved: 2n });
  });
});

/**
 * The sponsored path spends a request's sponsorship-token jti in the reservation's own transaction (issue 23): a
 * token is used up exactly when an op is reserved under it, whichever path the reservation takes (SQLite's per-turn
 * batch, PostgreSQL's batch, the single path with its merge).
 */
describe(`sponsorship tokens spent with the reservation (${BACKEND})`, () => {
  const replayed = { ok: false, tokenReplayed: true };
  /** Whether the jti is still unspent: spending it on its own succeeds (and so spends it). */
  const stillUsable = (jti: string) =>
    store.sponsorshipTokenUses.spend({ dappId, jti, expiresAt: nowSeconds() + 600, nowSeconds: nowSeconds() });

  test('a second reservation with the same jti is refused as a replay and moves nothing', async () => {
    const cap = `tok|replay|${randomUUID()}`;
    const jti = randomUUID();
    assert.deepEqual(await reserve([charge(cap, 1n, 10n)], { jti }), { ok: true });
    assert.deepEqual(await reserve([charge(cap, 1n, 10n)], { jti }), replayed);
    assert.deepEqual(await reserve([], { jti }), replayed, 'with no cap too: every signed op has its row');
    assert.deepEqual(await counter(cap), { used: 0n, reserved: 1n });
  });

  test('a cap that refuses the op leaves its token usable', async () => {
    const cap = `tok|full|${randomUUID()}`;
    const jti = randomUUID();
    assert.equal((await reserve([charge(cap, 11n, 10n)], { jti })).ok, false);
    assert.equal(await stillUsable(jti), true);
  });

  test('one token on 40 requests at once (one loop turn, one batch): exactly one is reserved', async () => {
    const cap = `tok|race|${randomUUID()}`;
    const jti = randomUUID();
    const results = await Promise.all(Array.from({ length: 40 }, () => reserve([charge(cap, 1n, 1000n)], { jti })));
    assert.equal(results.filter((r) => r.ok).length, 1);
    assert.equal(results.filter((r) => 'tokenReplayed' in r).length, 39);
    assert.deepEqual(await counter(cap), { used: 0n, reserved: 1n }, 'the replays took their charges back');
  });

  test('40 tokens at once, each once: all reserved, each spent', async () => {
    const jtis = Array.from({ length: 40 }, () => randomUUID());
    const results = await Promise.all(jtis.map((jti) => reserve([], { jti })));
    assert.ok(results.every((r) => r.ok));
    for (const jti of jtis) assert.equal(await stillUsable(jti), false);
  });

  test('the same op signed again: with a fresh token it merges, with the spent one it is a replay', async () => {
    const cap = `tok|merge|${randomUUID()}`;
    const id = randomUUID();
    const first = randomUUID();
    assert.deepEqual(await reserve([charge(cap, 2n, 10n)], { id, jti: first }), { ok: true });
    assert.deepEqual(await reserve([charge(cap, 3n, 10n)], { id, jti: first }), replayed);
    assert.deepEqual(await counter(cap), { used: 0n, reserved: 2n });
    assert.deepEqual(await reserve([charge(cap, 3n, 10n)], { id, jti: randomUUID() }), { ok: true });
    assert.deepEqual(await counter(cap), { used: 0n, reserved: 3n }, 'merged: the larger worst case, once');
  });
});
