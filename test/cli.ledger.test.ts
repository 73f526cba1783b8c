import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Store } from '../src/store/store.js';
import { runCliOnStore } from './helpers/cliRun.js';
import { BACKEND, dropTestSchema, openTestStore } from './helpers/testContext.js';

// `patron ledger list|stats|export` in-process, on the test store (src/cli/ledgerCommands.ts).

const SENDER = '0x3333333333333333333333333333333333333333';
let store: Store;
let schema: string | undefined;
let dir: string;
let dappId: string;

const cli = (argv: readonly string[]) => runCliOnStore({ store, argv });

before(async () => {
  ({ store, schema } = await openTestStore());
  dir = mkdtempSync(path.join(tmpdir(), 'patron-ledger-'));
  assert.equal((await cli(['account', 'create', '--email', 'ledger@example.com'])).code, 0);
  const created = await cli(['dapp', 'create', '--name', 'Ledger', '--chain', '31337', '--json']);
  dappId = (JSON.parse(created.stdout) as { dapp: { dappId: string } }).dapp.dappId;
  for (let i = 0; i < 5; i++) {
    const hash = `0x${i.toString(16).padStart(64, '0')}`;
    await store.spendLedger.reserve({
      id: `31337:${hash}`,
      dappId,
      chainId: 31337,
      userOpHash: hash,
      charges: [],
      expiresAt: Date.UTC(2026, 10, 2) + i,
      now: Date.UTC(2026, 10, 1) + i,
      item: { sender: SENDER, user: i < 3 ? 'alice' : 'bob', policyIds: [], worstCaseWei: 100n + BigInt(i) },
    });
  }
});
after(async () => {
  await store.close();
  await dropTestSchema(schema);
  rmSync(dir, { recursive: true, force: true });
});

test(`patron ledger list pages by cursor, filtered (${BACKEND})`, async () => {
  const first = await cli(['ledger', 'list', '--dapp', dappId, '--user', 'alice', '--limit', '2', '--json']);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const page = JSON.parse(first.stdout) as { items: { user: string }[]; nextCursor: string };
  assert.equal(page.items.length, 2);
  const second = await cli([
    'ledger',
    'list',
    '--dapp',
    dappId,
    '--user',
    'alice',
    '--cursor',
    page.nextCursor,
    '--json',
  ]);
  const rest = JSON.parse(second.stdout) as { items: { user: string }[]; nextCursor: string | null };
  assert.equal(rest.items.length, 1);
  assert.equal(rest.nextCursor, null);
  const bad = await cli(['ledger', 'list', '--dapp', dappId, '--status', 'lost']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /status must be one of/);
});

test('patron ledger stats sums per user', async () => {
  const r = await cli(['ledger', 'stats', '--dapp', dappId, '--group-by', 'user', '--json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const { stats } = JSON.parse(r.stdout) as {
    stats: { groups: { user: string; count: number; reservedWei: string }[]; total: { count: number } };
  };
  assert.deepEqual(
    stats.groups.map((g) => [g.user, g.count, g.reservedWei]),
    [
      ['alice', 3, '303'],
      ['bob', 2, '207'],
    ],
  );
  assert.equal(stats.total.count, 5);
});

test('patron ledger export writes the CSV to --out, and to stdout without it', async () => {
  const out = path.join(dir, 'ledger.csv');
  const r = await cli(['ledger', 'export', '--dapp', dappId, '--sender', SENDER, '--out', out]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const lines = readFileSync(out, 'utf8').split('\r\n');
  assert.equal(lines.length, 7, 'header, 5 rows, final line end');
  assert.ok(lines[0]?.startsWith('"created_at","id",'), lines[0]);
  const again = await cli(['ledger', 'export', '--dapp', dappId, '--out', out]);
  assert.equal(again.code, 1, 'an existing file is not overwritten');
  const toStdout = await cli(['ledger', 'export', '--dapp', dappId, '--user', 'bob']);
  assert.equal(toStdout.stdout.split('\r\n').length, 4);
});
