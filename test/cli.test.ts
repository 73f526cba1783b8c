import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { hashSecret } from '../src/accounts/credentials.js';
import { createApp } from '../src/app.js';
import { runCli } from '../src/cli/main.js';
import { createDeps, type Deps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import type { Store } from '../src/store/store.js';
import {
  BACKEND,
  dropTestSchema,
  fakeResolver,
  openTestStore,
  TEST_MASTER_KEY,
  testConfig,
  WEBHOOK_PATH,
} from './helpers/testContext.js';
import { accountWire, createdTokenWire, dappWire, tokenWire } from './helpers/wireSchemas.js';

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

const ROOT = path.resolve(import.meta.dirname, '..');

/** The chains the CLI's deployment serves besides the dev chain (dApps may list only served chains). */
const CLI_CHAINS = JSON.stringify(
  [1, 5, 7, 10, 137, 8453].map((chainId) => ({
    chainId,
    rpcUrl: 'http://127.0.0.1:1',
    paymaster: '0x00000000000000000000000000000000000000bb',
  })),
);

/** The CLI's environment in-process: storage and master key are injected, so only harmless values. */
const CLI_ENV: Readonly<Record<string, string>> = {
  PATRON_DATA_DIR: '/nonexistent-patron-test',
  LOG_LEVEL: 'silent',
  PATRON_CHAINS: CLI_CHAINS,
};

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function cli(store: Store, argv: readonly string[], env: Record<string, string> = CLI_ENV): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv,
    env,
    io: {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
    },
    store,
    masterKey: TEST_MASTER_KEY,
  });
  return { code, stdout, stderr };
}

/** Asserts that stdout is exactly one line holding one JSON object, and returns it. */
function oneJsonLine(text: string, what: string): unknown {
  assert.ok(text.endsWith('\n'), `${what}: output ends with a newline: ${JSON.stringify(text)}`);
  assert.equal(text.split('\n').length, 2, `${what}: exactly one line: ${JSON.stringify(text)}`);
  const value: unknown = JSON.parse(text);
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${what}: a JSON object`);
  return value;
}

/** Runs a command that must succeed with --json, and parses its single JSON line with `schema`. */
async function cliJson<T>(store: Store, argv: readonly string[], schema: z.ZodType<T>): Promise<T> {
  const r = await cli(store, [...argv, '--json']);
  const what = `patron ${argv.join(' ')} --json`;
  assert.equal(r.stderr, '', `${what}: stderr`);
  assert.equal(r.code, 0, `${what}: exit code (stdout ${r.stdout})`);
  return schema.parse(oneJsonLine(r.stdout, what));
}

/** Runs a command that must fail: with --json one `{"error":{"message"}}` line on stdout, else `patron: …` on stderr. */
async function cliError(store: Store, argv: readonly string[], message: string, code = 1): Promise<void> {
  const what = `patron ${argv.join(' ')}`;
  const j = await cli(store, [...argv, '--json']);
  assert.equal(j.code, code, `${what} --json: exit code`);
  assert.equal(j.stderr, '', `${what} --json: stderr`);
  assert.deepEqual(oneJsonLine(j.stdout, `${what} --json`), { error: { message } }, `${what} --json`);
  const h = await cli(store, argv);
  assert.equal(h.code, code, `${what}: exit code`);
  assert.equal(h.stdout, '', `${what}: stdout`);
  assert.equal(h.stderr, `patron: ${message}\n`, `${what}: stderr`);
}

const accountOut = z.strictObject({ account: accountWire });
const accountsOut = z.strictObject({ accounts: z.array(accountWire) });
const tokenOut = z.strictObject({
  token: createdTokenWire,
});
const tokensOut = z.strictObject({ tokens: z.array(tokenWire) });
const revokedOut = z.strictObject({ revoked: z.string() });
const dappOut = z.strictObject({ dapp: dappWire });
const dappsOut = z.strictObject({ dapps: z.array(dappWire) });

const envelope = z.strictObject({ statusCode: z.number().int(), message: z.string(), data: z.unknown().optional() });

async function pollUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A fresh store per test; closed (and its PostgreSQL schema dropped) afterwards. */
function useStore(): () => Store {
  let current: { store: Store; schema: string | undefined } | undefined;
  beforeEach(async () => {
    current = await openTestStore();
  });
  afterEach(async () => {
    if (current === undefined) return;
    await current.store.close();
    await dropTestSchema(current.schema);
    current = undefined;
  });
  return () => {
    assert.ok(current, 'store is open');
    return current.store;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// In-process
// ---------------------------------------------------------------------------------------------------------------

describe('patron CLI (in-process)', () => {
  const getStore = useStore();

  test('every command with --json prints exactly one JSON object line, and storage follows', async () => {
    const store = getStore();

    const { account } = await cliJson(store, ['account', 'create', '--email', '  Alice@Example.COM '], accountOut);
    assert.equal(account.email, 'alice@example.com');
    assert.deepEqual(await store.accounts.findByEmail('alice@example.com'), {
      id: account.accountId,
      email: 'alice@example.com',
      createdAt: Date.parse(account.createdAt),
    });

    const { accounts } = await cliJson(store, ['account', 'list'], accountsOut);
    assert.deepEqual(accounts, [account]);

    const { token } = await cliJson(store, ['token', 'create', '--name', 'deploy'], tokenOut);
    assert.deepEqual(
      [token.name, token.prefix, token.lastUsedAt, token.revokedAt],
      ['deploy', token.authToken.slice(0, 12), null, null],
    );
    const storedToken = await store.accounts.findTokenByHash(hashSecret(token.authToken));
    assert.deepEqual([storedToken?.id, storedToken?.accountId], [token.tokenId, account.accountId]);

    const { token: unnamed } = await cliJson(store, ['token', 'create'], tokenOut);
    assert.equal(unnamed.name, 'default');

    const list = await cli(store, ['token', 'list', '--json']);
    assert.ok(!list.stdout.includes(token.authToken), 'token list never prints a secret');
    const { tokens } = tokensOut.parse(oneJsonLine(list.stdout, 'token list'));
    assert.deepEqual(
      // Creation order; two rows made within one millisecond may swap, so compare sorted by name.
      tokens.map((t) => [t.name, t.tokenId, t.prefix, t.revokedAt]).sort(),
      [
        ['default', unnamed.tokenId, unnamed.prefix, null],
        ['deploy', token.tokenId, token.prefix, null],
      ],
    );

    const revoked = await cliJson(store, ['token', 'revoke', '--id', token.tokenId], revokedOut);
    assert.deepEqual(revoked, { revoked: token.tokenId });
    const afterRevoke = await store.accounts.findTokenByHash(hashSecret(token.authToken));
    assert.equal(typeof afterRevoke?.revokedAt, 'number');
    const { tokens: tokens2 } = await cliJson(store, ['token', 'list'], tokensOut);
    assert.equal(
      tokens2.find((t) => t.tokenId === token.tokenId)?.revokedAt,
      new Date(afterRevoke?.revokedAt ?? 0).toISOString(),
    );
    assert.equal(tokens2.find((t) => t.tokenId === unnamed.tokenId)?.revokedAt, null);

    const { dapp } = await cliJson(
      store,
      ['dapp', 'create', '--name', 'Shop', '--chain', '1', '--chain', '137,10'],
      dappOut,
    );
    assert.deepEqual([dapp.name, dapp.chainIds], ['Shop', [1, 10, 137]]);
    const storedDapp = await store.dapps.findById(dapp.dappId);
    assert.deepEqual(
      [storedDapp?.accountId, storedDapp?.name, storedDapp?.chainIds, storedDapp?.apiKeyPrefix],
      [account.accountId, 'Shop', [1, 10, 137], dapp.apiKey.slice(0, 12)],
    );
    assert.equal((await store.dapps.findByApiKeyHash(hashSecret(dapp.apiKey)))?.id, dapp.dappId);

    const { dapps } = await cliJson(store, ['dapp', 'list'], dappsOut);
    assert.deepEqual(dapps, [dapp]);

    const { dapp: updated } = await cliJson(
      store,
      ['dapp', 'update', '--id', dapp.dappId, '--name', 'Shop 2', '--chain', '8453,1,8453'],
      dappOut,
    );
    assert.deepEqual(
      [updated.dappId, updated.name, updated.chainIds, updated.apiKey],
      [dapp.dappId, 'Shop 2', [1, 8453], dapp.apiKey],
    );
    const { dapp: renamedOnly } = await cliJson(
      store,
      ['dapp', 'update', '--id', dapp.dappId, '--name', 'Shop 3'],
      dappOut,
    );
    assert.deepEqual([renamedOnly.name, renamedOnly.chainIds], ['Shop 3', [1, 8453]]);
    const stored2 = await store.dapps.findById(dapp.dappId);
    assert.deepEqual([stored2?.name, stored2?.chainIds], ['Shop 3', [1, 8453]]);

    const { dapp: rotated } = await cliJson(store, ['dapp', 'rotate-key', '--id', dapp.dappId], dappOut);
    assert.notEqual(rotated.apiKey, dapp.apiKey);
    assert.equal(rotated.dappId, dapp.dappId);
    assert.equal(await store.dapps.findByApiKeyHash(hashSecret(dapp.apiKey)), undefined);
    assert.equal((await store.dapps.findByApiKeyHash(hashSecret(rotated.apiKey)))?.id, dapp.dappId);
    const { dapps: dapps2 } = await cliJson(store, ['dapp', 'list'], dappsOut);
    assert.equal(dapps2[0]?.apiKey, rotated.apiKey);
  });

  test('dapp limits: the operator shows, sets (validated, canonical) and clears the signing bounds of any dApp', async () => {
    const store = getStore();
    await cliJson(store, ['account', 'create', '--email', 'limits@example.com'], z.unknown());
    const { dapp } = await cliJson(store, ['dapp', 'create', '--name', 'L', '--chain', '1'], dappOut);
    const limitsOut = z.object({ dappId: z.string(), limits: z.record(z.string(), z.unknown()) });
    assert.deepEqual(await cliJson(store, ['dapp', 'limits', '--id', dapp.dappId], limitsOut), {
      dappId: dapp.dappId,
      limits: {},
    });
    const set = JSON.stringify({
      bounds: { maxOpCostWei: 10 ** 15, tipMultiplier: 1.5 },
      chains: { '1': { bounds: { maxCallGasLimit: '500000' } } },
    });
    const shown = await cliJson(store, ['dapp', 'limits', '--id', dapp.dappId, '--set', set], limitsOut);
    assert.deepEqual(shown.limits, {
      bounds: { tipMultiplier: '1.5', maxOpCostWei: '1000000000000000' },
      chains: { '1': { bounds: { maxCallGasLimit: '500000' } } },
    });
    assert.equal((await store.dapps.findById(dapp.dappId))?.limits.bounds?.maxOpCostWei, 10n ** 15n);
    await cliError(
      store,
      ['dapp', 'limits', '--id', dapp.dappId, '--set', '{"bounds":{"maxOpCostWei":"-1"}}'],
      'limits.bounds: maxOpCostWei must be a whole number of at least 1 (a decimal string)',
    );
    await cliError(
      store,
      ['dapp', 'limits', '--id', dapp.dappId, '--set', 'nope'],
      `--set takes a JSON object, e.g. '{"bounds":{"maxOpCostWei":"10000000000000000"}}'`,
    );
    await cliError(
      store,
      ['dapp', 'limits', '--id', '00000000-0000-4000-8000-000000000000', '--clear'],
      'dApp not found',
    );
    assert.equal(
      (await store.dapps.findById(dapp.dappId))?.limits.bounds?.maxOpCostWei,
      10n ** 15n,
      'a refused change leaves the stored limits',
    );
    const cleared = await cliJson(store, ['dapp', 'limits', '--id', dapp.dappId, '--clear'], limitsOut);
    assert.deepEqual(cleared.limits, {});
    assert.deepEqual((await store.dapps.findById(dapp.dappId))?.limits, {});
  });

  test('human output (no --json): secrets shown once, tables, nothing on stderr', async () => {
    const store = getStore();
    const created = await cli(store, ['account', 'create', '--email', 'h@example.com']);
    assert.equal(created.code, 0);
    assert.match(created.stdout, /^Created account h@example\.com \([0-9a-f-]{36}\)\n$/);
    const tok = await cli(store, ['token', 'create', '--name', 'n1']);
    assert.equal(tok.code, 0);
    assert.equal(tok.stderr, '');
    const secret = /^ {2}(pat\.[0-9A-Za-z]{43})$/m.exec(tok.stdout)?.[1];
    assert.ok(secret, tok.stdout);
    const list = await cli(store, ['token', 'list']);
    assert.equal(list.code, 0);
    assert.ok(!list.stdout.includes(secret));
    assert.ok(list.stdout.includes(secret.slice(0, 12)));
    assert.match(list.stdout, /^tokenId\s+name\s+prefix\s+createdAt\s+lastUsedAt\s+revokedAt\n/);
    const empty = await cli(store, ['dapp', 'list']);
    assert.deepEqual(empty, { code: 0, stdout: '(none)\n', stderr: '' });
  });

  test('--account by email (any case) and by id; an unknown --account fails', async () => {
    const store = getStore();
    const { account: a } = await cliJson(store, ['account', 'create', '--email', 'a@example.com'], accountOut);
    const { account: b } = await cliJson(store, ['account', 'create', '--email', 'b@example.com'], accountOut);

    const { token: tb } = await cliJson(store, ['token', 'create', '--account', 'B@Example.com'], tokenOut);
    const { token: ta } = await cliJson(store, ['token', 'create', '--account', a.accountId], tokenOut);
    assert.equal((await store.accounts.findTokenByHash(hashSecret(tb.authToken)))?.accountId, b.accountId);
    assert.equal((await store.accounts.findTokenByHash(hashSecret(ta.authToken)))?.accountId, a.accountId);

    const { dapp } = await cliJson(
      store,
      ['dapp', 'create', '--account', 'b@example.com', '--name', 'B app', '--chain', '5'],
      dappOut,
    );
    assert.equal((await store.dapps.findById(dapp.dappId))?.accountId, b.accountId);
    const { dapps: aDapps } = await cliJson(store, ['dapp', 'list', '--account', a.accountId], dappsOut);
    assert.deepEqual(aDapps, []);
    const { tokens: bTokens } = await cliJson(store, ['token', 'list', '--account', b.accountId], tokensOut);
    assert.deepEqual(
      bTokens.map((t) => t.tokenId),
      [tb.tokenId],
    );

    // A cannot touch B's dApp or token through the CLI either: reported like an unknown id.
    await cliError(
      store,
      ['dapp', 'update', '--account', a.accountId, '--id', dapp.dappId, '--name', 'x'],
      'dApp not found',
    );
    await cliError(store, ['dapp', 'rotate-key', '--account', a.accountId, '--id', dapp.dappId], 'dApp not found');
    await cliError(store, ['token', 'revoke', '--account', a.accountId, '--id', tb.tokenId], 'Auth token not found');
    const storedB = await store.dapps.findById(dapp.dappId);
    assert.deepEqual([storedB?.name, storedB?.apiKeyPrefix], ['B app', dapp.apiKey.slice(0, 12)]);
    assert.equal((await store.accounts.findTokenByHash(hashSecret(tb.authToken)))?.revokedAt, null);

    await cliError(store, ['token', 'list', '--account', 'nobody@example.com'], 'No account nobody@example.com');
    await cliError(
      store,
      ['token', 'list', '--account', '00000000-0000-4000-8000-000000000000'],
      'No account 00000000-0000-4000-8000-000000000000',
    );
  });

  test('--account may be left out with exactly one account, not with none or two', async () => {
    const store = getStore();
    const needAccount: readonly string[][] = [
      ['token', 'create'],
      ['token', 'list'],
      ['token', 'revoke', '--id', 'x'],
      ['dapp', 'create', '--name', 'n', '--chain', '1'],
      ['dapp', 'list'],
      ['dapp', 'update', '--id', 'x', '--name', 'n'],
      ['dapp', 'rotate-key', '--id', 'x'],
    ];
    for (const argv of needAccount) {
      await cliError(store, argv, 'No account yet: run `patron account create --email …`');
    }

    const { account: only } = await cliJson(store, ['account', 'create', '--email', 'only@example.com'], accountOut);
    const { token } = await cliJson(store, ['token', 'create'], tokenOut);
    assert.equal((await store.accounts.findTokenByHash(hashSecret(token.authToken)))?.accountId, only.accountId);

    await cliJson(store, ['account', 'create', '--email', 'second@example.com'], accountOut);
    const tokensBefore = await store.accounts.listTokens(only.accountId);
    for (const argv of needAccount) {
      await cliError(store, argv, '--account is required when there is more than one account');
    }
    assert.deepEqual(await store.accounts.listTokens(only.accountId), tokensBefore);
    assert.deepEqual(await store.dapps.listByAccount(only.accountId), []);
  });

  test('errors: {"error":{"message"}} with --json, exit code 1, nothing stored', async () => {
    const store = getStore();
    const { account } = await cliJson(store, ['account', 'create', '--email', 'dup@example.com'], accountOut);
    const { dapp } = await cliJson(store, ['dapp', 'create', '--name', 'D', '--chain', '7'], dappOut);

    const cases: readonly { argv: string[]; message: string }[] = [
      {
        argv: ['account', 'create', '--email', 'dup@example.com'],
        message: 'An account with email dup@example.com already exists',
      },
      {
        argv: ['account', 'create', '--email', 'DUP@example.com'],
        message: 'An account with email dup@example.com already exists',
      },
      { argv: ['account', 'create'], message: '--email is required' },
      { argv: ['account', 'create', '--email', ''], message: '--email is required' },
      { argv: ['account', 'create', '--email', 'not-an-email'], message: 'email must be an email address' },
      { argv: ['token', 'create', '--name', 'x'.repeat(101)], message: 'name must be at most 100 characters' },
      { argv: ['token', 'revoke'], message: '--id is required' },
      { argv: ['token', 'revoke', '--id', '00000000-0000-4000-8000-000000000000'], message: 'Auth token not found' },
      { argv: ['dapp', 'create', '--chain', '1'], message: '--name is required' },
      {
        argv: ['dapp', 'create', '--name', 'x'],
        message: '--chain is required (repeat it or separate ids with commas)',
      },
      { argv: ['dapp', 'create', '--name', 'x', '--chain', 'abc'], message: '--chain takes chain ids, got "abc"' },
      { argv: ['dapp', 'create', '--name', 'x', '--chain', '1,,2'], message: '--chain takes chain ids, got ""' },
      { argv: ['dapp', 'create', '--name', 'x', '--chain=-5'], message: '--chain takes chain ids, got "-5"' },
      { argv: ['dapp', 'create', '--name', 'x', '--chain', '0'], message: 'chainIds must be positive integers' },
      {
        argv: ['dapp', 'create', '--name', 'x', '--chain', '9007199254740993'],
        message: 'chainIds must be positive integers',
      },
      { argv: ['dapp', 'create', '--name', '   ', '--chain', '1'], message: 'name must not be empty' },
      { argv: ['dapp', 'update', '--id', dapp.dappId], message: 'give name or chainIds to change' },
      { argv: ['dapp', 'update', '--name', 'x'], message: '--id is required' },
      { argv: ['dapp', 'update', '--id', 'nope', '--name', 'x'], message: 'dApp not found' },
      { argv: ['dapp', 'rotate-key', '--id', 'nope'], message: 'dApp not found' },
      { argv: ['dapp', 'rotate-key'], message: '--id is required' },
    ];
    for (const c of cases) await cliError(store, c.argv, c.message);

    assert.deepEqual(
      (await store.accounts.list()).map((a) => a.email),
      ['dup@example.com'],
    );
    assert.deepEqual(await store.accounts.listTokens(account.accountId), []);
    const dapps = await store.dapps.listByAccount(account.accountId);
    assert.deepEqual(
      dapps.map((d) => [d.id, d.name, d.chainIds, d.apiKeyPrefix]),
      [[dapp.dappId, 'D', [7], dapp.apiKey.slice(0, 12)]],
    );
  });

  test('an RPC that does not answer: one line naming its origin, never the path (API keys) nor "unexpected"', async () => {
    const store = getStore();
    // A port that was just free: connections to it are refused.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const rpc = `http://127.0.0.1:${port}/v2/SECRET-API-KEY?token=SECRET2`;
    const r = await cli(store, ['paymaster', 'info', '--rpc', rpc, '--paymaster', `0x${'11'.repeat(20)}`]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0] ?? '',
      new RegExp(`^patron: HTTP request failed \\(URL http://127\\.0\\.0\\.1:${port}/…\\).*ECONNREFUSED`),
    );
    assert.doesNotMatch(r.stderr, /SECRET|unexpected|Request body|Version: viem/);
  });

  test('a command on chains alone opens no storage and no master key: nothing is created where it runs', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'patron-chain-only-'));
    const dataDir = path.join(dir, 'data');
    try {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      let stderr = '';
      const code = await runCli({
        argv: ['paymaster', 'info', '--rpc', `http://127.0.0.1:${port}`, '--paymaster', `0x${'11'.repeat(20)}`],
        // No store and no master key given: before, the CLI opened <data dir>/patron.sqlite and wrote master.key.
        env: { PATRON_DATA_DIR: dataDir, LOG_LEVEL: 'silent', PATRON_CHAINS: CLI_CHAINS },
        io: {
          stdout: () => {},
          stderr: (t) => {
            stderr += t;
          },
        },
      });
      assert.equal(code, 1, stderr);
      assert.match(stderr, /ECONNREFUSED/);
      assert.equal(existsSync(dataDir), false, 'no data directory, database or key file was created');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an invalid configuration is reported as an error, exit code 78', async () => {
    const store = getStore();
    const r = await cli(store, ['account', 'list', '--json'], { ...CLI_ENV, PORT: 'abc' });
    assert.equal(r.code, 78);
    assert.deepEqual(oneJsonLine(r.stdout, 'config error'), {
      error: { message: 'Invalid configuration:\n  - PORT must be an integer from 0 to 65535, got "abc"' },
    });
  });

  test('unknown commands and options exit 2 with the usage; --help and no arguments exit 0', async () => {
    const store = getStore();
    for (const argv of [
      ['foo'],
      ['toString'],
      ['token'],
      ['token', 'delete'],
      ['account', 'create', 'extra'],
      ['dapp', 'rm', '--id', 'x'],
    ]) {
      const words = argv.filter((w) => !w.startsWith('--') && w !== 'x').join(' ');
      const h = await cli(store, argv);
      assert.equal(h.code, 2, argv.join(' '));
      assert.equal(h.stdout, '');
      assert.ok(h.stderr.startsWith(`patron: unknown command "${words}"\n\nUsage: patron <command>`), h.stderr);
      const j = await cli(store, [...argv, '--json']);
      assert.equal(j.code, 2);
      assert.equal(j.stderr, '');
      const parsed = z
        .strictObject({ error: z.strictObject({ message: z.string() }) })
        .parse(oneJsonLine(j.stdout, argv.join(' ')));
      assert.ok(parsed.error.message.startsWith(`unknown command "${words}"\n\nUsage:`), parsed.error.message);
    }
    const badOption = await cli(store, ['account', 'list', '--bogus']);
    assert.equal(badOption.code, 2);
    assert.match(badOption.stderr, /^patron: Unknown option '--bogus'/);
    const badOptionJson = await cli(store, ['account', 'list', '--bogus', '--json']);
    assert.equal(badOptionJson.code, 2);
    assert.match(
      z.object({ error: z.object({ message: z.string() }) }).parse(oneJsonLine(badOptionJson.stdout, '--bogus')).error
        .message,
      /^Unknown option '--bogus'/,
    );
    const missingValue = await cli(store, ['account', 'create', '--email']);
    assert.equal(missingValue.code, 2);

    for (const argv of [[], ['--help'], ['-h'], ['token', 'create', '--help']]) {
      const r = await cli(store, argv);
      assert.equal(r.code, 0, argv.join(' '));
      assert.equal(r.stderr, '');
      assert.ok(r.stdout.startsWith('Usage: patron <command> [options] [--json]\n'));
    }
    assert.deepEqual(await store.accounts.list(), [], 'help created nothing');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// CLI and app on one store
// ---------------------------------------------------------------------------------------------------------------

describe('patron CLI and the HTTP app on one store', () => {
  let store: Store;
  let schema: string | undefined;
  let deps: Deps;
  let app: FastifyInstance;
  const CACHE_TTL_MS = 300;

  beforeEach(async () => {
    ({ store, schema } = await openTestStore());
    deps = await createDeps(testConfig({ cacheTtlMs: CACHE_TTL_MS }), createLogger({ level: 'silent' }), {
      store,
      masterKey: TEST_MASTER_KEY,
      resolver: fakeResolver,
    });
    app = createApp(deps);
    await app.ready();
  });
  afterEach(async () => {
    await app.close();
    await deps.close();
    await dropTestSchema(schema);
  });

  async function get(url: string, headers: Record<string, string>) {
    const res = await app.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, body: envelope.parse(JSON.parse(res.body)) };
  }

  test('a CLI token authenticates at once; a CLI revocation takes effect within the cache TTL', async () => {
    const { account } = await cliJson(store, ['account', 'create', '--email', 'ops@example.com'], accountOut);
    const { token } = await cliJson(store, ['token', 'create', '--name', 'ops'], tokenOut);

    const res = await get('/api/admin/account', { authorization: `Bearer ${token.authToken}` });
    assert.deepEqual(res, {
      status: 200,
      body: {
        statusCode: 200,
        message: 'Account fetched',
        data: { accountId: account.accountId, email: 'ops@example.com', createdAt: account.createdAt },
      },
    });

    // The app's use is recorded in storage, where the CLI sees it.
    const listed = await pollUntil(
      'lastUsedAt in `patron token list`',
      async () => {
        const { tokens } = await cliJson(store, ['token', 'list'], tokensOut);
        const t = tokens.find((x) => x.tokenId === token.tokenId);
        return t?.lastUsedAt === null ? undefined : t;
      },
      3000,
    );
    assert.ok(listed.lastUsedAt !== null);

    // A token made through the API is listed by the CLI.
    const viaApi = await app.inject({
      method: 'POST',
      url: '/api/admin/tokens',
      headers: { authorization: `Bearer ${token.authToken}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'from api' }),
    });
    assert.equal(viaApi.statusCode, 200);
    const { tokens } = await cliJson(store, ['token', 'list'], tokensOut);
    assert.deepEqual(tokens.map((t) => t.name).sort(), ['from api', 'ops']);

    await cliJson(store, ['token', 'revoke', '--id', token.tokenId], revokedOut);
    const started = Date.now();
    const refused = await pollUntil(
      '401 after a CLI revocation',
      async () => {
        const r = await get('/api/admin/account', { authorization: `Bearer ${token.authToken}` });
        return r.status === 401 ? r : undefined;
      },
      CACHE_TTL_MS + 2000,
    );
    assert.deepEqual(refused.body, { statusCode: 401, message: 'Invalid auth token' });
    assert.ok(Date.now() - started <= CACHE_TTL_MS + 1000, `took ${Date.now() - started} ms`);
  });

  test('a CLI dApp key works on the webhook API; CLI update and rotate-key show through the API', async () => {
    await cliJson(store, ['account', 'create', '--email', 'dev@example.com'], accountOut);
    const { token } = await cliJson(store, ['token', 'create'], tokenOut);
    const { dapp } = await cliJson(store, ['dapp', 'create', '--name', 'Game', '--chain', '137,1'], dappOut);

    assert.deepEqual(await get(WEBHOOK_PATH, { authToken: token.authToken, apiKey: dapp.apiKey }), {
      status: 200,
      body: { statusCode: 200, message: 'Webhook list fetched', data: [] },
    });
    const viaApi = await get(`/api/admin/dapps/${dapp.dappId}`, { authtoken: token.authToken });
    assert.deepEqual(viaApi.body, { statusCode: 200, message: 'dApp fetched', data: dapp });

    const { dapp: updated } = await cliJson(
      store,
      ['dapp', 'update', '--id', dapp.dappId, '--name', 'Game 2', '--chain', '10'],
      dappOut,
    );
    const after = await get(`/api/admin/dapps/${dapp.dappId}`, { authtoken: token.authToken });
    assert.deepEqual(after.body, { statusCode: 200, message: 'dApp fetched', data: updated });
    assert.deepEqual([updated.name, updated.chainIds], ['Game 2', [10]]);

    const { dapp: rotated } = await cliJson(store, ['dapp', 'rotate-key', '--id', dapp.dappId], dappOut);
    const oldRefused = await pollUntil(
      'the old API key to be refused',
      async () => {
        const r = await get(WEBHOOK_PATH, { authToken: token.authToken, apiKey: dapp.apiKey });
        return r.status === 401 ? r : undefined;
      },
      CACHE_TTL_MS + 2000,
    );
    assert.deepEqual(oldRefused.body, { statusCode: 401, message: 'Invalid auth token or API key' });
    assert.deepEqual(await get(WEBHOOK_PATH, { authToken: token.authToken, apiKey: rotated.apiKey }), {
      status: 200,
      body: { statusCode: 200, message: 'Webhook list fetched', data: [] },
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Cross-process: the real server and the real CLI on one SQLite data directory
// ---------------------------------------------------------------------------------------------------------------

const children = new Set<ChildProcess>();

function childEnv(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'DATABASE_URL',
    'PATRON_MASTER_KEY',
    'NODE_ENV',
    'PATRON_PRODUCTION',
    'PATRON_DEMO',
    'PATRON_CACHE_TTL_MS',
    'PATRON_PUBLIC_URL',
    'HOST',
    'NODE_TEST_CONTEXT',
    'NODE_OPTIONS',
  ]) {
    delete env[k];
  }
  return { ...env, PATRON_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' };
}

interface RunningServer {
  readonly proc: ChildProcess;
  readonly url: string;
  output(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startServer(dataDir: string): Promise<RunningServer> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: childEnv(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  let out = '';
  let err = '';
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('exit', (code, signal) => resolve({ code, signal }));
  });
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /^Patron is running at (http:\/\/\S+)/m.exec(out);
    if (m?.[1] !== undefined) return { proc, url: m[1], output: () => out, exited };
    if (hasExited) assert.fail(`server exited before listening.\nstdout: ${out}\nstderr: ${err}`);
    if (Date.now() > deadline) assert.fail(`server did not start in 30 s.\nstdout: ${out}\nstderr: ${err}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function runCliProcess(dataDir: string, argv: readonly string[]): Promise<CliRun> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...argv], {
    cwd: ROOT,
    env: childEnv(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const code = await new Promise<number>((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (c) => resolve(c ?? -1));
  });
  children.delete(proc);
  return { code, stdout, stderr };
}

async function cliProcessJson<T>(dataDir: string, argv: readonly string[], schema: z.ZodType<T>): Promise<T> {
  const r = await runCliProcess(dataDir, [...argv, '--json']);
  const what = `patron ${argv.join(' ')} --json`;
  assert.equal(r.code, 0, `${what}: exit code\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.equal(r.stderr, '', `${what}: stderr`);
  return schema.parse(oneJsonLine(r.stdout, what));
}

async function fetchEnvelope(url: string, headers: Record<string, string>) {
  const res = await fetch(url, { headers });
  return { status: res.status, body: envelope.parse(await res.json()) };
}

async function stopServer(server: RunningServer): Promise<void> {
  server.proc.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    server.exited,
    new Promise<'timeout'>((r) => {
      timer = setTimeout(() => r('timeout'), 10_000);
    }),
  ]);
  clearTimeout(timer);
  assert.deepEqual(result, { code: 0, signal: null }, 'the server exits 0 on SIGTERM');
  children.delete(server.proc);
}

describe('patron CLI and server as separate processes (SQLite data dir)', {
  skip: BACKEND === 'postgres' ? 'SQLite only: PATRON_TEST_DATABASE_URL is set' : false,
}, () => {
  let dataDir: string | undefined;

  after(() => {
    for (const proc of children) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    }
    children.clear();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  test('demo credentials once, CLI writes seen by the running server, revocation within 5 s, clean restart', {
    timeout: 120_000,
  }, async (t) => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'patron-cli-test-'));
    const server = await startServer(dataDir);
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);

    // First start: the demo credentials are printed (right after the "running" line).
    const demo = await pollUntil(
      'demo credentials on stdout',
      async () => {
        const out = server.output();
        const token = /^ {2}authToken {3}(pat\.[0-9A-Za-z]{43})$/m.exec(out)?.[1];
        const apiKey = /^ {2}apiKey {6}(pk\.[0-9A-Za-z]{33}) /m.exec(out)?.[1];
        return token === undefined || apiKey === undefined ? undefined : { token, apiKey };
      },
      5000,
    );
    const demoAccount = await fetchEnvelope(`${server.url}/api/admin/account`, {
      authorization: `Bearer ${demo.token}`,
    });
    assert.equal(demoAccount.status, 200);
    assert.equal(z.object({ email: z.string() }).parse(demoAccount.body.data).email, 'demo@patron.local');
    assert.deepEqual(
      await fetchEnvelope(`${server.url}/api/v2/public/sdk/webhookParameters`, {
        authToken: demo.token,
        apiKey: demo.apiKey,
      }),
      { status: 200, body: { statusCode: 200, message: 'Webhook list fetched', data: [] } },
    );

    // The CLI reads the same storage while the server runs.
    const { tokens } = await cliProcessJson(dataDir, ['token', 'list'], tokensOut);
    assert.equal(tokens.length, 1);
    const demoToken = tokens[0];
    assert.ok(demoToken);
    assert.deepEqual([demoToken.name, demoToken.prefix, demoToken.revokedAt], ['demo', demo.token.slice(0, 12), null]);

    // A token created by the CLI works against the server at once.
    const { token: cliToken } = await cliProcessJson(dataDir, ['token', 'create', '--name', 'cli'], tokenOut);
    const viaCliToken = await fetchEnvelope(`${server.url}/api/admin/account`, {
      authorization: `Bearer ${cliToken.authToken}`,
    });
    assert.equal(viaCliToken.status, 200, JSON.stringify(viaCliToken.body));
    assert.deepEqual(viaCliToken.body.data, demoAccount.body.data);

    // Revoking the demo token with the CLI: the server refuses it within 5 s (cache TTL 2 s).
    assert.equal((await fetchEnvelope(`${server.url}/api/admin/account`, { authToken: demo.token })).status, 200);
    // Keep using the token while the CLI revokes it, so the server holds a freshly cached entry at that moment.
    let warming = true;
    const warm = (async () => {
      while (warming) {
        await fetch(`${server.url}/api/admin/account`, { headers: { authToken: demo.token } }).then((r) => r.text());
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await cliProcessJson(dataDir, ['token', 'revoke', '--id', demoToken.tokenId], revokedOut);
    const revokedAt = Date.now();
    warming = false;
    await warm;
    const refused = await pollUntil(
      'the server to refuse the revoked demo token',
      async () => {
        const r = await fetchEnvelope(`${server.url}/api/admin/account`, { authorization: `Bearer ${demo.token}` });
        return r.status === 401 ? r : undefined;
      },
      5000,
    );
    const elapsed = Date.now() - revokedAt;
    assert.deepEqual(refused.body, { statusCode: 401, message: 'Invalid auth token' });
    assert.ok(elapsed <= 5000, `revocation took ${elapsed} ms`);
    t.diagnostic(`the server refused the revoked token ${elapsed} ms after the CLI revoked it`);
    // The CLI token is unaffected.
    assert.equal(
      (await fetchEnvelope(`${server.url}/api/admin/account`, { authorization: `Bearer ${cliToken.authToken}` }))
        .status,
      200,
    );

    await stopServer(server);
    assert.ok(!/authToken {3}pat\./.test(server.output().split('Patron is running at')[0] ?? ''));

    // Second start on the same data dir: no demo credentials; the data (and master key) persisted.
    const again = await startServer(dataDir);
    await new Promise((r) => setTimeout(r, 500));
    const out = again.output();
    assert.ok(!out.includes('First start'), `demo printed again:\n${out}`);
    assert.doesNotMatch(out, /authToken\s+pat\./);
    assert.doesNotMatch(out, /apiKey\s+pk\./);
    assert.deepEqual(await fetchEnvelope(`${again.url}/api/admin/account`, { authorization: `Bearer ${demo.token}` }), {
      status: 401,
      body: { statusCode: 401, message: 'Invalid auth token' },
    });
    assert.equal(
      (await fetchEnvelope(`${again.url}/api/admin/account`, { authorization: `Bearer ${cliToken.authToken}` })).status,
      200,
    );
    // The demo dApp's key is still readable after the restart (same master key from the data dir).
    assert.deepEqual(
      await fetchEnvelope(`${again.url}/api/v2/public/sdk/webhookParameters`, {
        authToken: cliToken.authToken,
        apiKey: demo.apiKey,
      }),
      { status: 200, body: { statusCode: 200, message: 'Webhook list fetched', data: [] } },
    );
    const { accounts } = await cliProcessJson(dataDir, ['account', 'list'], accountsOut);
    assert.deepEqual(
      accounts.map((a) => a.email),
      ['demo@patron.local'],
    );
    await stopServer(again);
  });
});

test('patron --version, -v and version: the build, its schema and Node.js, without configuration or storage', async () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  for (const argv of [['--version'], ['-v'], ['version']]) {
    const out: string[] = [];
    const err: string[] = [];
    // No environment at all: a misconfigured host still answers which build it runs.
    const code = await runCli({ argv, env: {}, io: { stdout: (s) => out.push(s), stderr: (s) => err.push(s) } });
    assert.equal(code, 0, err.join(''));
    assert.match(
      out.join(''),
      new RegExp(`^patron ${pkg.version.replaceAll('.', '\\.')} \\(schema \\d{4}_[a-z0-9_]+, Node\\.js v`),
    );
  }
  const out: string[] = [];
  assert.equal(
    await runCli({ argv: ['version', '--json'], env: {}, io: { stdout: (s) => out.push(s), stderr: () => {} } }),
    0,
  );
  const info = JSON.parse(out.join('')) as { version: string; schema: string; node: string };
  assert.equal(info.version, pkg.version);
  assert.equal(info.node, process.version);
});
