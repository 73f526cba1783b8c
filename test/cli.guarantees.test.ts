import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Store } from '../src/store/store.js';
import { runCliJson, runCliOnStore } from './helpers/cliRun.js';
import { dropTestSchema, openTestStore } from './helpers/testContext.js';

/** `patron dapp guarantees show|on|off`: the operator's view and switch of a dApp's token guarantees (docs/reference/cli.md). */
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

test('dapp guarantees: off by default; on needs its cap; shown with the window; off keeps the cap; bad input named', async () => {
  await cli(['account', 'create', '--email', 'g-owner@example.com']);
  const created = await cli(['dapp', 'create', '--name', 'G', '--chain', '31337', '--account', 'g-owner@example.com']);
  const dappId = (created.out as { dapp: { dappId: string } }).dapp.dappId;
  const id = ['--id', dappId];

  assert.deepEqual((await cli(['dapp', 'guarantees', 'show', ...id])).out, {
    dappId,
    tokenGuarantees: { enabled: false },
    usage: null,
  });

  const uncapped = await cli(['dapp', 'guarantees', 'on', ...id]);
  assert.equal(uncapped.code, 1);
  assert.match(JSON.stringify(uncapped.out), /needs its cap: --cap-wei WEI --resets .* \(no unbounded guarantee\)/);
  const badResets = await cli(['dapp', 'guarantees', 'on', ...id, '--cap-wei', '1000', '--resets', 'yearly']);
  assert.equal(badResets.code, 1);
  assert.match(JSON.stringify(badResets.out), /resets must be one of hourly, daily, weekly, monthly, never/);
  const badWei = await cli(['dapp', 'guarantees', 'on', ...id, '--cap-wei', '0.1', '--resets', 'daily']);
  assert.match(JSON.stringify(badWei.out), /limitWei must be a positive whole number of wei/);
  assert.equal((await cli(['dapp', 'guarantees', 'show', ...id])).code, 0);

  const on = await cli(['dapp', 'guarantees', 'on', ...id, '--cap-wei', '50000000000000000', '--resets', 'weekly']);
  assert.equal(on.code, 0, JSON.stringify(on.out));
  const view = on.out as { tokenGuarantees: unknown; usage: Record<string, string> };
  const cap = { limitWei: '50000000000000000', resets: 'weekly' };
  assert.deepEqual(view.tokenGuarantees, { enabled: true, cap });
  assert.deepEqual(
    [view.usage.limitWei, view.usage.usedWei, view.usage.reservedWei, view.usage.resets],
    ['50000000000000000', '0', '0', 'weekly'],
  );
  assert.equal(new Date(view.usage.windowStart ?? '').getUTCDay(), 1, 'weeks start on Monday');
  assert.deepEqual((await store.dapps.findById(dappId))?.tokenGuarantees, { enabled: true, cap });

  const human = await runCliOnStore({ store, argv: ['dapp', 'guarantees', 'show', ...id] });
  assert.match(
    human.stdout,
    new RegExp(`^dApp ${dappId}: token guarantees on \\(cap 50000000000000000 wei, weekly\\)\\n`),
  );
  assert.match(human.stdout, /\n {2}this window: used 0 wei, reserved 0 wei, from \S+Z to \S+Z\n$/);

  const off = await cli(['dapp', 'guarantees', 'off', ...id]);
  assert.deepEqual((off.out as { tokenGuarantees: unknown }).tokenGuarantees, { enabled: false, cap });
  assert.deepEqual((await store.dapps.findById(dappId))?.tokenGuarantees, { enabled: false, cap });

  const unknown = await cli(['dapp', 'guarantees', 'show', '--id', randomUUID()]);
  assert.equal(unknown.code, 1);
  assert.match(JSON.stringify(unknown.out), /No dApp /);
});
