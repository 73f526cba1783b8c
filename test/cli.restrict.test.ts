import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Store } from '../src/store/store.js';
import { runCliJson } from './helpers/cliRun.js';
import { dropTestSchema, openTestStore } from './helpers/testContext.js';

/** `patron dapp restrict`: the dApp owner's caller restrictions from the CLI (docs/reference/cli.md). */
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

test('dapp restrict: shows, sets (normalised, the flags given are the whole set), refuses bad input, clears', async () => {
  assert.equal((await cli(['account', 'create', '--email', 'owner@example.com'])).code, 0);
  const other = await cli(['account', 'create', '--email', 'other@example.com']);
  const created = await cli(['dapp', 'create', '--name', 'R', '--chain', '31337', '--account', 'owner@example.com']);
  const dappId = (created.out as { dapp: { dappId: string } }).dapp.dappId;
  const owner = ['--id', dappId, '--account', 'owner@example.com'];

  assert.deepEqual((await cli(['dapp', 'restrict', ...owner])).out, { dappId, restrictions: {} });
  const set = await cli([
    'dapp',
    'restrict',
    ...owner,
    '--origins',
    'https://app.example.com,*.example.org',
    '--allow-no-origin',
    '--cidrs',
    '10.0.0.0/8',
    '--cidrs',
    '2001:db8::/32',
    '--methods',
    'sponsorship,dryRun',
  ]);
  assert.equal(set.code, 0, JSON.stringify(set.out));
  const expected = {
    dappId,
    restrictions: {
      origins: ['https://app.example.com:443', 'https://*.example.org:443'],
      allowNoOrigin: true,
      cidrs: ['10.0.0.0/8', '2001:db8::/32'],
      methods: ['sponsorship', 'dryRun'],
    },
  };
  assert.deepEqual(set.out, expected);
  assert.deepEqual((await cli(['dapp', 'restrict', ...owner])).out, expected);

  const bad = await cli(['dapp', 'restrict', ...owner, '--methods', 'everything']);
  assert.equal(bad.code, 1);
  assert.match(JSON.stringify(bad.out), /sponsorship, tokenQuotes, dryRun/);
  // Another account's dApp is not found, and stays as it was.
  assert.ok((other.out as { account?: unknown }).account);
  const foreign = await cli(['dapp', 'restrict', '--id', dappId, '--account', 'other@example.com', '--clear']);
  assert.equal(foreign.code, 1);
  assert.deepEqual((await cli(['dapp', 'restrict', ...owner])).out, expected);

  // The flags given are the whole set: only methods now.
  const only = await cli(['dapp', 'restrict', ...owner, '--methods', 'tokenQuotes']);
  assert.deepEqual(only.out, { dappId, restrictions: { methods: ['tokenQuotes'] } });
  assert.deepEqual((await cli(['dapp', 'restrict', ...owner, '--clear'])).out, { dappId, restrictions: {} });
});
