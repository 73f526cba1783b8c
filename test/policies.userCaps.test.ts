import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { PolicyDeniedError } from '../src/errors/PatronError.js';
import { openStore, type Store } from '../src/store/store.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore, TEST_DATABASE_URL } from './helpers/testContext.js';
import { randomSender, signThrough, type UserCapInstance, userCapInstance } from './helpers/userCapGate.js';

/**
 * Caps with scope `user` (issue 23) through the policy gate on real stores: one end user signing from many wallets
 * at once is held to the cap exactly, by two instances on one database (two store handles on one SQLite file or
 * one PostgreSQL schema, and a second process), like the sender and dApp caps; a request without a user is denied
 * (`userRequired`). The HTTP path sets the user from the sponsorship token, wired separately.
 */
let dir: string | undefined;
let schema: string | undefined;
let storeA: Store;
let storeB: Store;
let a: UserCapInstance;
let b: UserCapInstance;
let workerArgs: string[];

before(async () => {
  if (TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '') {
    dir = mkdtempSync(join(tmpdir(), 'patron-user-caps-'));
    const file = join(dir, 'patron.sqlite');
    storeA = await openStore({ storage: { kind: 'sqlite', file } });
    storeB = await openStore({ storage: { kind: 'sqlite', file } });
    workerArgs = ['sqlite', file, ''];
  } else {
    ({ store: storeA, schema } = await openTestStore());
    ({ store: storeB } = await openTestStore(schema === undefined ? {} : { schema }));
    workerArgs = ['postgres', TEST_DATABASE_URL, schema ?? ''];
  }
  a = userCapInstance(storeA);
  b = userCapInstance(storeB);
});
after(async () => {
  await storeB.close();
  await storeA.close();
  await dropTestSchema(schema);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const newDapp = async (caps: unknown[]) => {
  const dappId = await insertBareDapp(storeA, 'user caps');
  const policy = await a.service.create({ dappId, name: 'per person', rules: { caps } });
  return { dappId, policyId: policy.id };
};
const tally = (results: readonly string[]) => {
  const t: Record<string, number> = {};
  for (const r of results) t[r] = (t[r] ?? 0) + 1;
  return t;
};

describe(`user caps under concurrency (${BACKEND})`, () => {
  test('two instances, 150 requests each, one user through 300 wallets, 7 wei each against 1000 wei: exactly 142', async () => {
    const { dappId, policyId } = await newDapp([
      { scope: 'user', unit: 'wei', limit: '1000', resets: 'daily' },
      { scope: 'user', unit: 'ops', limit: '1000', resets: 'weekly' },
      { scope: 'user', unit: 'usd', limit: '1', resets: 'monthly' },
    ]);
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        signThrough({
          gate: (i % 2 === 0 ? a : b).gate,
          dappId,
          sender: randomSender(),
          user: 'alice',
          worstCaseWei: 7n,
        }),
      ),
    );
    assert.deepEqual(tally(results), { ok: Math.floor(1000 / 7), 'cap:user': 300 - Math.floor(1000 / 7) });
    // All or none: every cap of the 142 reserved, in its unit (7 wei at 3,000 USD rounds up to 1 micro-USD).
    const usage = await b.service.usage({ dappId, policyId, user: 'alice' });
    assert.deepEqual(
      usage.map((c) => [c.scope, c.unit, c.resets, c.used, c.reserved]),
      [
        ['user', 'wei', 'daily', '0', '994'],
        ['user', 'ops', 'weekly', '0', '142'],
        ['user', 'usd', 'monthly', '0', '142'],
      ],
    );
    // The denial names the per-user cap; another user counts apart.
    await assert.rejects(
      a.gate.reserve({
        pass: await a.gate.check({
          dappId,
          chainId: 31337,
          sender: randomSender(),
          initCode: '0x',
          callData: '0x',
          maxFeePerGas: 1n,
          requestedPolicyId: undefined,
          user: 'alice',
        }),
        worstCaseWei: 7n,
        signed: {
          userOpHash: () => `0x${'12'.repeat(32)}`,
          opKey: () => `0x${'12'.repeat(32)}`,
          signature: '12'.repeat(16),
        },
        validUntil: Math.floor(Date.now() / 1000) + 600,
        window: { unit: 'seconds', until: Math.floor(Date.now() / 1000) + 600 },
        paymaster: '0x00000000000000000000000000000000000000aa',
      }),
      (err: unknown) =>
        err instanceof PolicyDeniedError &&
        err.data?.scope === 'user' &&
        err.data.reserved === '994' &&
        /per-user cap of 1000 wei .* has 6 wei left and this op needs 7 wei/.test(err.message),
    );
    assert.equal(
      await signThrough({ gate: b.gate, dappId, sender: randomSender(), user: 'bob', worstCaseWei: 7n }),
      'ok',
    );
    assert.deepEqual(
      (await a.service.usage({ dappId, policyId, user: 'bob' })).map((c) => c.reserved),
      ['7', '1', '1'],
    );
  });

  test('two processes, 100 requests each (split over two handles here), one user, an ops cap of 61: exactly 61', async () => {
    const { dappId, policyId } = await newDapp([{ scope: 'user', unit: 'ops', limit: '61', resets: 'hourly' }]);
    const user = 'did:privy:x|sender|ops';
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/helpers/userCapWorker.ts', ...workerArgs, dappId, user, '100', '5'],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const lines = createInterface({ input: child.stdout });
    const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
    assert.equal(await next(), 'ready');
    const childCount = next();
    child.stdin.end('go\n');
    const mine = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        signThrough({ gate: (i % 2 === 0 ? a : b).gate, dappId, sender: randomSender(), user, worstCaseWei: 5n }),
      ),
    );
    const theirs = Number(await childCount);
    const ours = mine.filter((r) => r === 'ok').length;
    assert.equal(ours + theirs, 61, `this process ${ours}, the other ${theirs}`);
    assert.ok(mine.every((r) => r === 'ok' || r === 'cap:user'));
    const [cap] = await a.service.usage({ dappId, policyId, user });
    assert.deepEqual([cap?.used, cap?.reserved], ['0', '61']);
    assert.equal(await exited, 0);
  });
});

describe(`userRequired (${BACKEND})`, () => {
  test('a user cap and a request without a user: denied before anything is reserved; other policies need none', async () => {
    const { dappId, policyId } = await newDapp([
      { scope: 'user', unit: 'ops', limit: '10' },
      { scope: 'dapp', unit: 'ops', limit: '10' },
    ]);
    for (const user of [undefined, '']) {
      assert.equal(
        await signThrough({ gate: a.gate, dappId, sender: randomSender(), user, worstCaseWei: 1n }),
        'userRequired',
      );
    }
    assert.deepEqual(
      (await a.service.usage({ dappId, policyId })).map((c) => [c.scope, c.reserved]),
      [['dapp', '0']],
      'nothing reserved; without user the usage shows the dApp-wide cap only',
    );
    const plain = await newDapp([{ scope: 'sender', unit: 'ops', limit: '10' }]);
    assert.equal(
      await signThrough({
        gate: b.gate,
        dappId: plain.dappId,
        sender: randomSender(),
        user: undefined,
        worstCaseWei: 1n,
      }),
      'ok',
    );
  });
});
