import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type AccountService, createAccountService } from '../src/accounts/accountService.js';
import { CHANGE_POLL_MS } from '../src/cache/cachePolicy.js';
import { createSecretBox } from '../src/crypto/secretBox.js';
import { createDeps, type Deps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import { openStore, type Store } from '../src/store/store.js';
import { COUNTER_EVERY_MS } from '../src/store/tenants/policyRepository.js';
import { recordOf } from './helpers/requestLogRecords.js';
import { fakeResolver, insertBareDapp, TEST_MASTER_KEY, testConfig } from './helpers/testContext.js';

/**
 * The credential caches on an SQLite file, the embedded default: a lookup keeps its entry while no other process
 * wrote (so traffic spread over many dApps is not a query per request once each key was seen), and sees another
 * process's change (the CLI revoking a token, rotating a key) within CHANGE_POLL_MS, through the change counter
 * the cached tables' triggers move (migration 0014), however long PATRON_CACHE_TTL_MS is. "Another process" is a second connection to the file,
 * exactly what the CLI opens.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CACHE_TTL_MS = 200;
/**
 * Past one poll: the server then knows of the CLI's writes just made. (A lookup inside the window is cached
 * under the older number and loaded once more after the poll: an extra miss, never a stale answer.)
 */
const afterPoll = () => sleep(CHANGE_POLL_MS + 20);

let dir: string;
let serverStore: Store;
let cliStore: Store;
let deps: Deps;
let cli: AccountService;
const queries = { token: 0, apiKey: 0 };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patron-cache-'));
  const file = join(dir, 'patron.sqlite');
  serverStore = await openStore({ storage: { kind: 'sqlite', file } });
  // Count the lookups that reach the database.
  const { accounts, dapps } = serverStore;
  const findTokenByHash = accounts.findTokenByHash.bind(accounts);
  const findByApiKeyHash = dapps.findByApiKeyHash.bind(dapps);
  Object.assign(accounts, {
    findTokenByHash: (hash: string) => {
      queries.token += 1;
      return findTokenByHash(hash);
    },
  });
  Object.assign(dapps, {
    findByApiKeyHash: (hash: string) => {
      queries.apiKey += 1;
      return findByApiKeyHash(hash);
    },
  });
  deps = await createDeps(testConfig({ cacheTtlMs: CACHE_TTL_MS }), createLogger({ level: 'silent' }), {
    store: serverStore,
    masterKey: TEST_MASTER_KEY,
    resolver: fakeResolver,
  });
  cliStore = await openStore({ storage: { kind: 'sqlite', file } });
  cli = createAccountService({
    store: cliStore,
    secretBox: createSecretBox(TEST_MASTER_KEY),
    cache: { ttlMs: 0, maxEntries: 100 },
    now: Date.now,
    logger: createLogger({ level: 'silent' }),
    servedChainIds: [31337],
  });
});

after(async () => {
  await deps?.close();
  await cliStore?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('credential caches on an SQLite file', () => {
  test('an auth token stays cached past the TTL while nothing changed, and a revocation by another process is seen within the poll', async () => {
    const account = await cli.createAccount({ email: 'ops@example.com' });
    const { token, secret } = await cli.createToken({ accountId: account.id });
    await afterPoll();
    assert.equal((await deps.accounts.authenticateToken(secret))?.account.id, account.id);
    const before = queries.token;
    await sleep(CACHE_TTL_MS * 2);
    assert.equal((await deps.accounts.authenticateToken(secret))?.account.id, account.id);
    assert.equal(queries.token, before, 'served from the cache, past PATRON_CACHE_TTL_MS');

    await cli.revokeToken({ accountId: account.id, tokenId: token.id });
    await afterPoll();
    assert.equal(await deps.accounts.authenticateToken(secret), undefined, 'the revocation is seen');
  });

  test('a key rotated by another process stops working within the poll; the new key works at once', async () => {
    const account = await cli.createAccount({ email: 'dapp-owner@example.com' });
    const dapp = await cli.createDapp({ accountId: account.id, name: 'rotating', chainIds: [31337] });
    await afterPoll();
    assert.equal((await deps.accounts.resolveApiKey(dapp.apiKey))?.id, dapp.id);
    const before = queries.apiKey;
    await sleep(CACHE_TTL_MS * 2);
    assert.equal((await deps.accounts.resolveApiKey(dapp.apiKey))?.id, dapp.id);
    assert.equal(queries.apiKey, before, 'served from the cache, past PATRON_CACHE_TTL_MS');

    const rotated = await cli.rotateApiKey({ accountId: account.id, dappId: dapp.id });
    await afterPoll();
    assert.equal(await deps.accounts.resolveApiKey(dapp.apiKey), undefined, 'the old key is refused');
    assert.equal((await deps.accounts.resolveApiKey(rotated.apiKey))?.id, dapp.id);
  });

  test('writes to what no cache holds (the request log, on its own thread and connection) do not empty the caches', async () => {
    const account = await cli.createAccount({ email: 'busy@example.com' });
    const dapp = await cli.createDapp({ accountId: account.id, name: 'busy', chainIds: [31337] });
    await afterPoll();
    await deps.accounts.resolveApiKey(dapp.apiKey);
    const before = queries.apiKey;
    // Real commits by another connection to the file: the request log's thread writing a batch.
    for (let i = 0; i < 20; i++) {
      deps.requestLog.record(
        recordOf({
          at: Date.now(),
          accountId: account.id,
          dappId: dapp.id,
          chainId: 31337,
          method: 'pm_getFeeQuoteOrData',
          mode: 'SPONSORED',
          sender: null,
          outcome: 'error',
          errorCode: -32602,
          reason: 'test row',
          webhook: null,
          latencyMs: 1,
          policy: null,
          userOpHash: null,
        }),
      );
    }
    await deps.requestLog.flush();
    assert.equal((await serverStore.requestLog.query({ accountId: account.id, limit: 100 })).length, 20);
    await afterPoll();
    assert.equal((await deps.accounts.resolveApiKey(dapp.apiKey))?.id, dapp.id);
    assert.equal(queries.apiKey, before, 'still a hit: only writes to cached tables move the change counter');
  });

  test('a policy written by another process moves the version the sponsorship path re-checks, within COUNTER_EVERY_MS', async () => {
    const dappId = await insertBareDapp(serverStore, 'versioned');
    const v0 = await serverStore.policies.version(dappId);
    const policy = { dappId, name: 'from the CLI', active: true, rules: {}, createdAt: 1, updatedAt: 1 };
    await cliStore.policies.insert({ id: randomUUID(), ...policy });
    // Within the interval the last read may stand; past it, the server reads the file's number again.
    await sleep(COUNTER_EVERY_MS + 2);
    const v1 = await serverStore.policies.version(dappId);
    assert.ok(v1 > v0, `${v1} after ${v0}`);
    // Cached once read: the same number again without another connection's commit.
    await sleep(COUNTER_EVERY_MS + 2);
    assert.equal(await serverStore.policies.version(dappId), v1);
  });
});
