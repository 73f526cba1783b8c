import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Store } from '../src/store/store.js';
import { runCliOnStore } from './helpers/cliRun.js';
import { BACKEND, dropTestSchema, openTestStore } from './helpers/testContext.js';

// `patron keeper history` in-process, on the test store (src/cli/keeperCommands.ts): the keeper's ledger, filtered.

const A = '0x000000000000000000000000000000000000000a';
const B = '0x000000000000000000000000000000000000000b';
let store: Store;
let schema: string | undefined;
const cli = (argv: readonly string[]) => runCliOnStore({ store, argv });

before(async () => {
  ({ store, schema } = await openTestStore());
  for (const [i, paymaster, mode] of [
    [0, A, 'sent'],
    [1, B, 'dry_run'],
    [2, A, 'proposed'],
  ] as const) {
    await store.depositTopups.insert({
      id: `t${i}`,
      chainId: 31337,
      paymaster,
      entryPoint: '0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789',
      amountWei: BigInt(i + 1) * 10n ** 18n,
      funder: '0x00000000000000000000000000000000000000f0',
      mode,
      txHash: mode === 'sent' ? `0x${'ab'.repeat(32)}` : undefined,
      state: mode === 'proposed' ? 'pending' : 'confirmed',
      reason: 'deposit 1 ETH under the mark 2 ETH',
      depositWei: 10n ** 18n,
      markWei: 2n * 10n ** 18n,
      targetWei: 5n * 10n ** 18n,
      proposal: undefined,
      createdAt: Date.UTC(2026, 11, 1) + i * 1000,
    });
  }
});
after(async () => {
  await store.close();
  await dropTestSchema(schema);
});

test(`patron keeper history lists the top-ups newest first, by paymaster (${BACKEND})`, async () => {
  const all = await cli(['keeper', 'history', '--json']);
  assert.equal(all.code, 0, all.stdout + all.stderr);
  const rows = (JSON.parse(all.stdout) as { topups: { id: string; mode: string; amountWei: string }[] }).topups;
  assert.deepEqual(
    rows.map((r) => [r.id, r.mode]),
    [
      ['t2', 'proposed'],
      ['t1', 'dry_run'],
      ['t0', 'sent'],
    ],
  );
  const ofA = await cli(['keeper', 'history', '--paymaster', A, '--limit', '1']);
  assert.equal(ofA.code, 0, ofA.stderr);
  assert.match(ofA.stdout, /proposed/);
  assert.match(ofA.stdout, /3 ETH/);
  assert.doesNotMatch(ofA.stdout, /dry_run|sent/);
  const bad = await cli(['keeper', 'history', '--paymaster', 'nope']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /paymaster must be an address/);
});
