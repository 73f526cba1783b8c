import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../src/store/store.js';
import type { PolicyRecord } from '../src/store/tenants/policyRepository.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore } from './helpers/testContext.js';

/** The policies table on the configured back end: CRUD, unique names per dApp, and tenancy on every query. */
let store: Store;
let schema: string | undefined;
let mine: string;
let theirs: string;

before(async () => {
  ({ store, schema } = await openTestStore());
  [mine, theirs] = [await insertBareDapp(store, 'policies'), await insertBareDapp(store, 'policies')];
});
after(async () => {
  await store.close();
  await dropTestSchema(schema);
});

const record = (dappId: string, name: string, rules: unknown = {}): PolicyRecord => ({
  id: randomUUID(),
  dappId,
  name,
  active: true,
  rules,
  createdAt: 1_000,
  updatedAt: 1_000,
});

describe(`policy repository (${BACKEND})`, () => {
  test('insert, list in creation order, find; the rules come back as stored', async () => {
    const rules = {
      caps: [{ scope: 'dapp', unit: 'usd', limit: '100.5', resets: 'daily' }],
      maxFeePerGas: '3000000000',
    };
    const a = record(mine, 'daily budget', rules);
    const b = {
      ...record(mine, 'allowlist', { contracts: [{ address: '0x1111111111111111111111111111111111111111' }] }),
      createdAt: 2_000,
    };
    assert.equal(await store.policies.insert(a), 'created');
    assert.equal(await store.policies.insert(b), 'created');
    assert.deepEqual(
      (await store.policies.listByDapp(mine)).map((p) => p.name),
      ['daily budget', 'allowlist'],
    );
    assert.deepEqual(await store.policies.findInDapp({ dappId: mine, policyId: a.id }), a);
  });

  test('names are unique per dApp, not across dApps', async () => {
    assert.equal(await store.policies.insert(record(mine, 'same')), 'created');
    assert.equal(await store.policies.insert(record(mine, 'same')), 'name-taken');
    assert.equal(await store.policies.insert(record(theirs, 'same')), 'created');
  });

  test('update changes what is given; a clash of names is reported', async () => {
    const p = record(mine, 'to update', { sponsorDeployment: false });
    await store.policies.insert(p);
    const u = await store.policies.update({ dappId: mine, policyId: p.id, active: false, now: 5_000 });
    assert.ok(u !== undefined && u !== 'name-taken');
    assert.deepEqual(
      [u.active, u.name, u.rules, u.updatedAt],
      [false, 'to update', { sponsorDeployment: false }, 5_000],
    );
    const r = await store.policies.update({
      dappId: mine,
      policyId: p.id,
      rules: { chainIds: [1] },
      name: 'renamed',
      now: 6_000,
    });
    assert.ok(r !== undefined && r !== 'name-taken');
    assert.deepEqual([r.name, r.rules, r.active], ['renamed', { chainIds: [1] }, false]);
    assert.equal(await store.policies.update({ dappId: mine, policyId: p.id, name: 'same', now: 7_000 }), 'name-taken');
  });

  test('another dApp can neither see, change nor delete the policy, whatever id it names', async () => {
    const p = record(mine, 'private');
    await store.policies.insert(p);
    assert.equal(await store.policies.findInDapp({ dappId: theirs, policyId: p.id }), undefined);
    assert.ok(!(await store.policies.listByDapp(theirs)).some((x) => x.id === p.id));
    assert.equal(await store.policies.update({ dappId: theirs, policyId: p.id, active: false, now: 1 }), undefined);
    assert.equal(await store.policies.delete({ dappId: theirs, policyId: p.id }), false);
    assert.equal((await store.policies.findInDapp({ dappId: mine, policyId: p.id }))?.active, true, 'unchanged');
    assert.equal(await store.policies.delete({ dappId: mine, policyId: p.id }), true);
    assert.equal(await store.policies.findInDapp({ dappId: mine, policyId: p.id }), undefined);
  });
});
