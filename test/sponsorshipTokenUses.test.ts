import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { JtiReplayStore } from '../src/sponsorshipTokens/replayStore.js';
import type { Store } from '../src/store/store.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore } from './helpers/testContext.js';

/** The jti replay store on the configured back end (table sponsorship_token_uses, migration 0017). */
let store: Store;
let schema: string | undefined;
let mine: string;
let theirs: string;

before(async () => {
  ({ store, schema } = await openTestStore());
  [mine, theirs] = [await insertBareDapp(store, 'tokens'), await insertBareDapp(store, 'tokens')];
});
after(async () => {
  await store.close();
  await dropTestSchema(schema);
});

const NOW = 1_800_000_000;

describe(`sponsorship token uses (${BACKEND})`, () => {
  test('a jti is spent once per dApp until it expires, then may be spent again', async () => {
    const uses: JtiReplayStore = store.sponsorshipTokenUses; // the domain's interface, met structurally
    const spend = (dappId: string, nowSeconds = NOW) =>
      uses.spend({ dappId, jti: 'j-1', expiresAt: NOW + 60, nowSeconds });
    assert.equal(await spend(mine), true);
    assert.equal(await spend(mine), false, 'replayed');
    assert.equal(await spend(mine, NOW + 60), false, 'still spent at its expiry second');
    assert.equal(await spend(theirs), true, 'another dApp has its own ids');
    assert.equal(await uses.spend({ dappId: mine, jti: 'j-1', expiresAt: NOW + 200, nowSeconds: NOW + 61 }), true);
    assert.equal(await spend(mine, NOW + 100), false, 'the takeover set the new expiry');
  });

  test('concurrent spends of one jti: exactly one wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        store.sponsorshipTokenUses.spend({ dappId: mine, jti: 'race', expiresAt: NOW + 60, nowSeconds: NOW }),
      ),
    );
    assert.equal(results.filter(Boolean).length, 1);
  });

  test('sweep deletes the expired rows only', async () => {
    const uses = store.sponsorshipTokenUses;
    await uses.spend({ dappId: mine, jti: 'old', expiresAt: NOW - 10, nowSeconds: NOW - 20 });
    await uses.spend({ dappId: mine, jti: 'live', expiresAt: NOW + 1000, nowSeconds: NOW });
    assert.ok((await uses.sweep(NOW)) >= 1);
    assert.equal(await uses.spend({ dappId: mine, jti: 'live', expiresAt: NOW + 1000, nowSeconds: NOW }), false);
    assert.equal(await uses.spend({ dappId: mine, jti: 'old', expiresAt: NOW + 10, nowSeconds: NOW }), true);
  });
});
