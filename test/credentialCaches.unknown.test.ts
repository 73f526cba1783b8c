import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type AccountService, createAccountService } from '../src/accounts/accountService.js';
import { hashSecret } from '../src/accounts/credentials.js';
import { createSecretBox } from '../src/crypto/secretBox.js';
import { createLogger } from '../src/logger.js';
import type { Store } from '../src/store/store.js';
import { dropTestSchema, openTestStore, TEST_MASTER_KEY } from './helpers/testContext.js';

/**
 * Issue 31: an unknown API key or auth token, a string the caller chose, is never cached, so a flood of made-up ones
 * neither grows the credential caches nor pushes a real entry out of them. The service on the real store (SQLite or
 * PostgreSQL), its cache at the smallest size the configuration allows and a TTL no test outlasts, with no change
 * feed: an entry leaves only by eviction, so a second lookup of the real credential would be the flood's doing.
 */
const MAX_ENTRIES = 100;
let store: Store;
let schema: string | undefined;
let accounts: AccountService;
const lookups = { apiKey: [] as string[], token: [] as string[] };

before(async () => {
  ({ store, schema } = await openTestStore());
  const findByApiKeyHash = store.dapps.findByApiKeyHash.bind(store.dapps);
  store.dapps.findByApiKeyHash = (hash) => {
    lookups.apiKey.push(hash);
    return findByApiKeyHash(hash);
  };
  const findTokenByHash = store.accounts.findTokenByHash.bind(store.accounts);
  store.accounts.findTokenByHash = (hash) => {
    lookups.token.push(hash);
    return findTokenByHash(hash);
  };
  accounts = createAccountService({
    store,
    secretBox: createSecretBox(TEST_MASTER_KEY),
    cache: { ttlMs: 60_000, maxEntries: MAX_ENTRIES },
    now: Date.now,
    logger: createLogger({ level: 'silent' }),
    servedChainIds: [31337],
  });
});
after(async () => {
  await store.close();
  await dropTestSchema(schema);
});

/** A string of the credential's shape (`pk.` + 33, `pat.` + 43 letters and digits) that nobody was given. */
const madeUp = (prefix: string, length: number) =>
  `${prefix}${randomBytes(length).toString('base64url').replace(/[-_]/g, 'x').slice(0, length)}`;
const count = (seen: string[], secret: string) => seen.filter((h) => h === hashSecret(secret)).length;

describe('unknown credentials are not cached', () => {
  test('API keys: 1.5 × the cache in made-up keys leave the real key cached; each made-up key is looked up each time', async () => {
    const account = await accounts.createAccount({ email: `k-${randomBytes(4).toString('hex')}@example.com` });
    const dapp = await accounts.createDapp({ accountId: account.id, name: 'real', chainIds: [31337] });
    assert.equal((await accounts.resolveApiKey(dapp.apiKey))?.id, dapp.id);
    const flood = Array.from({ length: MAX_ENTRIES * 1.5 }, () => madeUp('pk.', 33));
    for (const key of flood) assert.equal(await accounts.resolveApiKey(key), undefined);
    assert.equal((await accounts.resolveApiKey(dapp.apiKey))?.id, dapp.id);
    assert.equal(count(lookups.apiKey, dapp.apiKey), 1, 'the real key was not pushed out');
    const again = flood[0] ?? '';
    assert.equal(await accounts.resolveApiKey(again), undefined);
    assert.equal(count(lookups.apiKey, again), 2, 'nothing was kept for the made-up key');
  });

  test('auth tokens: the same for the admin API', async () => {
    const account = await accounts.createAccount({ email: `t-${randomBytes(4).toString('hex')}@example.com` });
    const { secret } = await accounts.createToken({ accountId: account.id });
    assert.equal((await accounts.authenticateToken(secret))?.account.id, account.id);
    const flood = Array.from({ length: MAX_ENTRIES * 1.5 }, () => madeUp('pat.', 43));
    for (const token of flood) assert.equal(await accounts.authenticateToken(token), undefined);
    assert.equal((await accounts.authenticateToken(secret))?.account.id, account.id);
    assert.equal(count(lookups.token, secret), 1, 'the real token was not pushed out');
    const again = flood[0] ?? '';
    assert.equal(await accounts.authenticateToken(again), undefined);
    assert.equal(count(lookups.token, again), 2, 'nothing was kept for the made-up token');
  });
});
