import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Store } from '../src/store/store.js';
import { runCliJson } from './helpers/cliRun.js';
import { createTokenIssuer } from './helpers/sponsorshipTokens.js';
import { dropTestSchema, openTestStore } from './helpers/testContext.js';

/** `patron dapp tokens show|set|clear`: the dApp owner's sponsorship-token settings from the CLI (docs/reference/cli.md). */
let store: Store;
let schema: string | undefined;

before(async () => {
  ({ store, schema } = await openTestStore());
});
after(async () => {
  await store.close();
  await dropTestSchema(schema);
});

const cli = (argv: readonly string[]) => runCliJson({ store, argv });

test('dapp tokens: shows none, sets, refuses bad input and another account, clears', async () => {
  assert.equal((await cli(['account', 'create', '--email', 'owner@example.com'])).code, 0);
  assert.equal((await cli(['account', 'create', '--email', 'other@example.com'])).code, 0);
  const created = await cli(['dapp', 'create', '--name', 'T', '--chain', '31337', '--account', 'owner@example.com']);
  const dappId = (created.out as { dapp: { dappId: string } }).dapp.dappId;
  const owner = ['--id', dappId, '--account', 'owner@example.com'];
  const none = { dappId, sponsorshipTokens: { required: false, keys: [] } };

  assert.deepEqual((await cli(['dapp', 'tokens', 'show', ...owner])).out, none);
  const settings = (await createTokenIssuer('backend')).settings(true);
  const set = await cli(['dapp', 'tokens', 'set', ...owner, '--settings', JSON.stringify(settings)]);
  assert.equal(set.code, 0, JSON.stringify(set.out));
  const shown = (await cli(['dapp', 'tokens', 'show', ...owner])).out as { sponsorshipTokens: typeof settings };
  assert.equal(shown.sponsorshipTokens.required, true);
  assert.equal(shown.sponsorshipTokens.keys[0]?.id, 'backend');

  const bad = await cli(['dapp', 'tokens', 'set', ...owner, '--settings', '{"required":true}']);
  assert.equal(bad.code, 1);
  assert.match(JSON.stringify(bad.out), /must hold a key/);
  const foreign = await cli(['dapp', 'tokens', 'show', '--id', dappId, '--account', 'other@example.com']);
  assert.equal(foreign.code, 1);
  assert.match(JSON.stringify(foreign.out), /not found/);

  assert.deepEqual((await cli(['dapp', 'tokens', 'clear', ...owner])).out, none);
  assert.equal((await cli(['dapp', 'tokens', 'nope', ...owner])).code, 2);
});
