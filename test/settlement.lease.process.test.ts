import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { type ChainHttpServer, serveChainOverHttp } from './helpers/chainHttpServer.js';
import { KEYS, type PatronFixture, startPatronFixture } from './helpers/patronPaymasterV06.js';
import { instanceEnv, type ServiceProcess, spawnService } from './helpers/serviceProcess.js';
import { TEST_DATABASE_URL } from './helpers/testContext.js';

/**
 * Issue 21, "N instances are one paymaster", settlement: two real service processes on one PostgreSQL schema, both
 * with settlement on, following one configured chain (an in-process EVM served over HTTP on 127.0.0.1). Exactly one
 * follows it (it holds the chain's lease, a session advisory lock), the other stands by; when the follower is
 * killed (SIGKILL: no shutdown, its session simply ends), the other takes the chain over within seconds and moves
 * the cursor past the blocks mined since.
 */
const skip = TEST_DATABASE_URL === undefined && 'needs PATRON_TEST_DATABASE_URL';
const schema = `lease_${randomBytes(5).toString('hex')}`;
let fx: PatronFixture;
let chainServer: ChainHttpServer;
let db: pg.Client;
const instances: ServiceProcess[] = [];
let dataDir: string;

before(async () => {
  if (skip !== false) return;
  fx = await startPatronFixture();
  chainServer = await serveChainOverHttp(fx.chain);
  db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  await db.query(`CREATE SCHEMA "${schema}"`);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-lease-'));
});
after(async () => {
  if (skip !== false) return;
  await Promise.all(instances.map((i) => i.stop()));
  await db.query(`DROP SCHEMA "${schema}" CASCADE`);
  await db.end();
  await chainServer.close();
  await fx.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function startInstance(): ServiceProcess {
  const instance = spawnService({
    ...instanceEnv(schema, dataDir),
    PATRON_SIGNER_PRIVATE_KEY: KEYS.signer,
    PATRON_SETTLEMENT_CONFIRMATIONS: '0',
    PATRON_SETTLEMENT_POLL_MS: '300',
    PATRON_CHAINS: JSON.stringify([
      {
        chainId: fx.chain.chainId,
        rpcUrl: chainServer.url,
        paymaster: fx.paymaster,
        entryPoint: fx.entryPoint,
        nativeUsd: { type: 'fixed', usd: '3000' },
      },
    ]),
  });
  instances.push(instance);
  return instance;
}

const FOLLOWS = /"msg":"settlement: this process follows the chain"/;
const STANDS_BY = /"msg":"settlement: another process follows the chain; standing by"/;

async function until(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    assert.ok(Date.now() < deadline, `${what}:\n${instances.map((i) => i.output()).join('\n----\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const cursorBlock = async (): Promise<bigint | undefined> => {
  const res = await db.query<{ block_number: string }>(
    `SELECT block_number FROM "${schema}".chain_cursors WHERE chain_id = $1 AND paymaster = $2`,
    [fx.chain.chainId, fx.paymaster.toLowerCase()],
  );
  const v = res.rows[0]?.block_number;
  return v === undefined ? undefined : BigInt(v);
};

test('two instances with settlement on: one follows the chain, the other stands by and takes over when it is killed', {
  skip,
  timeout: 120_000,
}, async () => {
  const a = startInstance();
  const b = startInstance();
  await Promise.all([a.baseUrl(), b.baseUrl()]);
  await until(
    'each instance took its part',
    () => [a, b].every((i) => FOLLOWS.test(i.output()) || STANDS_BY.test(i.output())),
    15_000,
  );
  const followers = [a, b].filter((i) => FOLLOWS.test(i.output()));
  assert.equal(followers.length, 1, 'exactly one instance follows the chain');
  const [follower] = followers as [typeof a];
  const standby = follower === a ? b : a;
  assert.match(standby.output(), STANDS_BY);
  assert.doesNotMatch(standby.output(), FOLLOWS);

  // The follower moves the cursor; the one standing by never claims the chain while the follower lives.
  await fx.client.mine({ blocks: 2 });
  const head = await fx.client.getBlockNumber();
  await until('the follower reaches the head', async () => ((await cursorBlock()) ?? -1n) >= head, 10_000);
  await new Promise((r) => setTimeout(r, 1000));
  assert.doesNotMatch(standby.output(), FOLLOWS, 'still standing by');

  follower.child.kill('SIGKILL');
  await new Promise((r) => follower.child.once('exit', r));
  const killedAt = Date.now();
  await fx.client.mine({ blocks: 3 });
  const later = await fx.client.getBlockNumber();
  await until('the other instance takes the chain over', () => FOLLOWS.test(standby.output()), 10_000);
  await until('and settles past the blocks mined since', async () => ((await cursorBlock()) ?? -1n) >= later, 10_000);
  assert.ok(Date.now() - killedAt < 10_000, 'taken over within seconds');
});
