import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { getAddress } from 'viem';
import { chainDeployments } from './chainSettings.js';
import { ConfigError, loadConfig } from './config.js';
import { DEFAULT_EIP7702_DELEGATES } from './eip7702Delegates.js';

const KEY = 'ab'.repeat(32);

/** Runs loadConfig and returns the ConfigError it throws; fails when it throws something else or nothing. */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    assert.equal(err.name, 'ConfigError');
    return err;
  }
  assert.fail(`expected loadConfig(${JSON.stringify(env)}) to throw a ConfigError`);
}

describe('loadConfig defaults', () => {
  test('an empty environment gives the embedded development defaults', () => {
    const c = loadConfig({});
    const dataDir = path.resolve('./data');
    assert.equal(c.port, 3000);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.dataDir, dataDir);
    assert.ok(path.isAbsolute(c.dataDir));
    assert.deepEqual(c.storage, { kind: 'sqlite', file: path.join(dataDir, 'patron.sqlite') });
    assert.equal(c.production, false);
    assert.equal(c.masterKeyHex, undefined);
    assert.equal(c.publicUrl, undefined);
    assert.equal(c.cacheTtlMs, 2000);
    assert.equal(c.cacheMaxEntries, 100_000);
    assert.equal(c.gatingCacheMs, 30_000);
    assert.equal(c.maxWebhooksPerDapp, 10);
    assert.equal(c.demo, true);
    assert.equal(c.allowPrivateWebhookUrls, true);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.bodyLimitBytes, 64 * 1024);
  });

  test('PATRON_DATA_DIR moves the data directory and the SQLite file with it', () => {
    const c = loadConfig({ PATRON_DATA_DIR: 'some/where' });
    assert.equal(c.dataDir, path.resolve('some/where'));
    assert.deepEqual(c.storage, { kind: 'sqlite', file: path.join(path.resolve('some/where'), 'patron.sqlite') });
  });

  test('explicit values override the defaults', () => {
    const c = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      PATRON_CACHE_TTL_MS: '0',
      PATRON_CACHE_MAX_ENTRIES: '5000',
      PATRON_GATING_CACHE_SECONDS: '0',
      PATRON_MAX_WEBHOOKS_PER_DAPP: '3',
      LOG_LEVEL: 'debug',
      PATRON_PUBLIC_URL: 'https://patron.example.com',
    });
    assert.equal(c.port, 8080);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.cacheTtlMs, 0);
    assert.equal(c.cacheMaxEntries, 5000);
    assert.equal(c.gatingCacheMs, 0);
    assert.equal(c.maxWebhooksPerDapp, 3);
    assert.equal(c.logLevel, 'debug');
    assert.equal(c.publicUrl, 'https://patron.example.com');
  });

  test('the result is frozen', () => {
    const c = loadConfig({});
    assert.ok(Object.isFrozen(c));
    assert.throws(() => {
      (c as { port: number }).port = 1;
    }, TypeError);
    assert.equal(c.port, 3000);
  });
});

describe('loadConfig storage', () => {
  test('DATABASE_URL selects PostgreSQL with a default pool of 10 and turns the demo off', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://patron@db.example.com:5432/patron' });
    assert.deepEqual(c.storage, {
      kind: 'postgres',
      url: 'postgres://patron@db.example.com:5432/patron',
      poolSize: 10,
    });
    assert.equal(c.demo, false);
    assert.equal(c.production, false);
  });

  test('postgresql:// is accepted and PATRON_DB_POOL_SIZE sets the pool', () => {
    const c = loadConfig({ DATABASE_URL: 'postgresql://db/patron', PATRON_DB_POOL_SIZE: '25' });
    assert.deepEqual(c.storage, { kind: 'postgres', url: 'postgresql://db/patron', poolSize: 25 });
  });

  test('an empty DATABASE_URL means SQLite', () => {
    assert.equal(loadConfig({ DATABASE_URL: '' }).storage.kind, 'sqlite');
  });
});

const SIGNER = 'ab'.repeat(32);

describe('loadConfig production mode', () => {
  const missingKey = 'PATRON_MASTER_KEY is required in production mode (32 bytes as 64 hex characters)';

  for (const env of [
    { NODE_ENV: 'production', PATRON_SIGNER_PRIVATE_KEY: SIGNER },
    { PATRON_PRODUCTION: 'true', PATRON_SIGNER_PRIVATE_KEY: SIGNER },
  ]) {
    const label = Object.entries(env)
      .filter(([k]) => k !== 'PATRON_SIGNER_PRIVATE_KEY')
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');

    test(`${label} without PATRON_MASTER_KEY is a ConfigError naming it`, () => {
      const err = configError(env);
      assert.deepEqual(err.problems, [missingKey]);
      assert.match(err.message, /PATRON_MASTER_KEY/);
    });

    test(`${label} with PATRON_MASTER_KEY is production: no private webhooks, no demo`, () => {
      const c = loadConfig({ ...env, PATRON_MASTER_KEY: KEY });
      assert.equal(c.production, true);
      assert.equal(c.masterKeyHex, KEY);
      assert.equal(c.allowPrivateWebhookUrls, false);
      assert.equal(c.demo, false);
    });
  }

  test('a 0x prefix on PATRON_MASTER_KEY is stripped', () => {
    assert.equal(
      loadConfig({ NODE_ENV: 'production', PATRON_MASTER_KEY: `0x${KEY}`, PATRON_SIGNER_PRIVATE_KEY: SIGNER })
        .masterKeyHex,
      KEY,
    );
  });

  test('PATRON_PRODUCTION=false overrides NODE_ENV=production', () => {
    const c = loadConfig({ NODE_ENV: 'production', PATRON_PRODUCTION: 'false' });
    assert.equal(c.production, false);
    assert.equal(c.allowPrivateWebhookUrls, true);
  });

  test('other NODE_ENV values are not production', () => {
    assert.equal(loadConfig({ NODE_ENV: 'development' }).production, false);
    assert.equal(loadConfig({ NODE_ENV: 'test' }).production, false);
  });
});

describe('loadConfig rejects bad values with a message naming the variable', () => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: 'abc' }, 'PORT must be an integer from 0 to 65535, got "abc"'],
    [{ PORT: '70000' }, 'PORT must be an integer from 0 to 65535, got "70000"'],
    [{ PORT: '-1' }, 'PORT must be an integer from 0 to 65535, got "-1"'],
    [{ PORT: '1e3' }, 'PORT must be an integer from 0 to 65535, got "1e3"'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must be a postgres:// or postgresql:// URL'],
    [{ PATRON_MASTER_KEY: 'short' }, 'PATRON_MASTER_KEY must be 32 bytes as 64 hex characters'],
    [{ PATRON_MASTER_KEY: 'zz'.repeat(32) }, 'PATRON_MASTER_KEY must be 32 bytes as 64 hex characters'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'],
    [{ PATRON_PRODUCTION: 'maybe' }, 'PATRON_PRODUCTION must be one of true, false, 1, 0, yes, no'],
    [{ PATRON_CACHE_TTL_MS: '60001' }, 'PATRON_CACHE_TTL_MS must be an integer from 0 to 60000, got "60001"'],
    [{ PATRON_CACHE_MAX_ENTRIES: '99' }, 'PATRON_CACHE_MAX_ENTRIES must be an integer from 100 to 10000000, got "99"'],
    [
      { PATRON_GATING_CACHE_SECONDS: '3601' },
      'PATRON_GATING_CACHE_SECONDS must be an integer from 0 to 3600, got "3601"',
    ],
    [{ PATRON_MAX_WEBHOOKS_PER_DAPP: '0' }, 'PATRON_MAX_WEBHOOKS_PER_DAPP must be an integer from 1 to 1000, got "0"'],
    [{ PATRON_PUBLIC_URL: 'not a url' }, 'PATRON_PUBLIC_URL must be an absolute URL'],
  ];
  for (const [env, problem] of cases) {
    test(JSON.stringify(env), () => {
      const err = configError(env);
      assert.deepEqual(err.problems, [problem]);
      assert.equal(err.message, `Invalid configuration:\n  - ${problem}`);
    });
  }

  test('several bad values are all reported at once', () => {
    const err = configError({
      PORT: 'abc',
      DATABASE_URL: 'mysql://x',
      PATRON_MASTER_KEY: 'short',
      LOG_LEVEL: 'loud',
      PATRON_PRODUCTION: 'maybe',
    });
    assert.deepEqual([...err.problems].sort(), [
      'DATABASE_URL must be a postgres:// or postgresql:// URL',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      'PATRON_MASTER_KEY must be 32 bytes as 64 hex characters',
      'PATRON_PRODUCTION must be one of true, false, 1, 0, yes, no',
      'PORT must be an integer from 0 to 65535, got "abc"',
    ]);
    for (const p of err.problems) assert.ok(err.message.includes(`  - ${p}`), `message lists "${p}"`);
  });

  test('a missing production master key is reported together with bad values', {}, () => {
    const err = configError({ NODE_ENV: 'production', PORT: 'abc', PATRON_SIGNER_PRIVATE_KEY: SIGNER });
    assert.deepEqual([...err.problems].sort(), [
      'PATRON_MASTER_KEY is required in production mode (32 bytes as 64 hex characters)',
      'PORT must be an integer from 0 to 65535, got "abc"',
    ]);
  });
});

describe('PATRON_WEBHOOK_TIMEOUT_MS', () => {
  test('defaults to 2000 ms, with a 64 KiB answer limit', () => {
    const c = loadConfig({});
    assert.equal(c.webhookTimeoutMs, 2000);
    assert.equal(c.webhookMaxResponseBytes, 64 * 1024);
  });

  test('accepts 100 to 30000', () => {
    assert.equal(loadConfig({ PATRON_WEBHOOK_TIMEOUT_MS: '100' }).webhookTimeoutMs, 100);
    assert.equal(loadConfig({ PATRON_WEBHOOK_TIMEOUT_MS: '30000' }).webhookTimeoutMs, 30_000);
  });

  for (const value of ['99', '30001', '1.5', 'abc', '-5']) {
    test(`refuses "${value}"`, () => {
      assert.deepEqual(configError({ PATRON_WEBHOOK_TIMEOUT_MS: value }).problems, [
        `PATRON_WEBHOOK_TIMEOUT_MS must be an integer from 100 to 30000, got "${value}"`,
      ]);
    });
  }
});

describe('PATRON_WEBHOOK_DNS_CACHE_SECONDS', () => {
  test('defaults to 30 s; 0 turns the cache off; at most an hour', () => {
    assert.equal(loadConfig({}).webhookDnsCacheMs, 30_000);
    assert.equal(loadConfig({ PATRON_WEBHOOK_DNS_CACHE_SECONDS: '0' }).webhookDnsCacheMs, 0);
    assert.equal(loadConfig({ PATRON_WEBHOOK_DNS_CACHE_SECONDS: '3600' }).webhookDnsCacheMs, 3_600_000);
  });

  for (const value of ['-1', '3601', '2.5', 'soon']) {
    test(`refuses "${value}"`, () => {
      assert.deepEqual(configError({ PATRON_WEBHOOK_DNS_CACHE_SECONDS: value }).problems, [
        `PATRON_WEBHOOK_DNS_CACHE_SECONDS must be an integer from 0 to 3600, got "${value}"`,
      ]);
    });
  }
});

describe('chains, signer and sponsorship window', () => {
  test('defaults: dev chain outside production, signer key in the data directory, 300 s / 3600 s / 30 s', () => {
    const c = loadConfig({ PATRON_DATA_DIR: '/tmp/x' });
    assert.equal(c.paymaster.devChain, true);
    assert.deepEqual(c.paymaster.chains, []);
    assert.deepEqual(c.paymaster.signer, { kind: 'dataDir', dataDir: '/tmp/x' });
    assert.deepEqual(c.paymaster.sponsorship, {
      defaultExpirySeconds: 120,
      maxExpirySeconds: 600,
      validAfterSkewSeconds: 30,
      eip7702Delegates: DEFAULT_EIP7702_DELEGATES,
    });
  });

  test('PATRON_EIP7702_DELEGATES: comma-separated addresses, checksummed; anything else is named', () => {
    const c = loadConfig({
      PATRON_DATA_DIR: '/tmp/x',
      PATRON_EIP7702_DELEGATES:
        ' 0xe6cae83bde06e4c305530e199d7217f42808555b ,0x00000000000000000000000000000000000000aa',
    });
    assert.deepEqual(c.paymaster.sponsorship.eip7702Delegates, [
      '0xe6Cae83BdE06E4c305530e199D7217f42808555B',
      '0x00000000000000000000000000000000000000AA',
    ]);
    const err = configError({ PATRON_EIP7702_DELEGATES: '0xe6cae83bde06e4c305530e199d7217f42808555b,nope' });
    assert.match(
      err.problems.join('\n'),
      /PATRON_EIP7702_DELEGATES must be comma-separated addresses; "nope" is not one/,
    );
  });

  test('PATRON_CHAINS: paymasters for EntryPoint v0.7+ at the canonical EntryPoints, with or without a v0.6 one', () => {
    const pm = '0x00000000000000000000000000000000000000bb';
    const c = loadConfig({
      PATRON_DATA_DIR: '/tmp/x',
      PATRON_CHAINS: JSON.stringify([{ chainId: 8453, rpcUrl: 'https://rpc.example', paymasters: { '0.8': pm } }]),
    });
    const [chain] = c.paymaster.chains;
    assert.ok(chain);
    assert.deepEqual(chainDeployments(chain), [
      { entryPointVersion: '0.8', entryPoint: '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108', paymaster: getAddress(pm) },
    ]);
    const none = configError({ PATRON_CHAINS: JSON.stringify([{ chainId: 1, rpcUrl: 'https://rpc.example' }]) });
    assert.match(none.problems.join('\n'), /a chain needs a paymaster \(EntryPoint v0\.6\) or paymasters \(v0\.7\+\)/);
    const bad = configError({
      PATRON_CHAINS: JSON.stringify([{ chainId: 1, rpcUrl: 'https://rpc.example', paymasters: { '0.5': pm } }]),
    });
    assert.deepEqual(bad.problems, [
      'PATRON_CHAINS[0].paymasters.0.5 is not a known key here: paymasters keys are "0.7", "0.8" or "0.9"',
    ]);
  });

  test('PATRON_CHAINS: l1Fee names the L2 fee oracle ("opStack" or "arbitrum"), none unless set; a near miss is named', () => {
    const pm = '0x00000000000000000000000000000000000000bb';
    const chains = (extra: object) =>
      JSON.stringify([{ chainId: 8453, rpcUrl: 'https://rpc.example', paymasters: { '0.7': pm }, ...extra }]);
    for (const kind of ['opStack', 'arbitrum'] as const) {
      const c = loadConfig({ PATRON_DATA_DIR: '/tmp/x', PATRON_CHAINS: chains({ l1Fee: kind }) });
      assert.equal(c.paymaster.chains[0]?.l1Fee, kind);
    }
    assert.equal(
      loadConfig({ PATRON_DATA_DIR: '/tmp/x', PATRON_CHAINS: chains({}) }).paymaster.chains[0]?.l1Fee,
      undefined,
    );
    const expected =
      'PATRON_CHAINS[0]: l1Fee must be "opStack" (an OP-stack chain: Optimism, Base, …) or "arbitrum" (an Arbitrum Nitro chain)';
    assert.deepEqual(configError({ PATRON_CHAINS: chains({ l1Fee: 'optimism' }) }).problems, [
      `${expected}; did you mean "opStack"?`,
    ]);
    assert.deepEqual(configError({ PATRON_CHAINS: chains({ l1Fee: 'Nitro' }) }).problems, [
      `${expected}; did you mean "arbitrum"?`,
    ]);
    assert.deepEqual(configError({ PATRON_CHAINS: chains({ l1Fee: 'zksync' }) }).problems, [
      `${expected}; "zksync" is not one`,
    ]);
    assert.deepEqual(configError({ PATRON_CHAINS: chains({ l1Fee: true }) }).problems, [
      `${expected}; true is not one`,
    ]);
  });

  test('PATRON_CHAINS: maxBlockTimeSeconds, the bound v0.9 block windows are counted at, is a positive number', () => {
    const pm = '0x00000000000000000000000000000000000000bb';
    const chains = (extra: object) =>
      JSON.stringify([{ chainId: 8453, rpcUrl: 'https://rpc.example', paymasters: { '0.9': pm }, ...extra }]);
    const c = loadConfig({ PATRON_DATA_DIR: '/tmp/x', PATRON_CHAINS: chains({ maxBlockTimeSeconds: 2 }) });
    assert.equal(c.paymaster.chains[0]?.maxBlockTimeSeconds, 2);
    const unset = loadConfig({ PATRON_DATA_DIR: '/tmp/x', PATRON_CHAINS: chains({}) });
    assert.equal(unset.paymaster.chains[0]?.maxBlockTimeSeconds, undefined);
    assert.match(
      configError({ PATRON_CHAINS: chains({ maxBlockTimeSeconds: 0 }) }).problems.join('\n'),
      /maxBlockTimeSeconds must be positive/,
    );
  });

  test('PATRON_CHAINS: accounts, per kind, checksummed; an unknown kind, a bad address or one given two kinds refused', () => {
    const pm = '0x00000000000000000000000000000000000000bb';
    const chains = (accounts: unknown) =>
      JSON.stringify([{ chainId: 8453, rpcUrl: 'https://rpc.example', paymasters: { '0.7': pm }, accounts }]);
    const impl = '0xae8c656ad28f2b59a196ab61815c16a0ae1c3cba';
    const hash = `0x${'ab'.repeat(32)}`;
    const c = loadConfig({
      PATRON_DATA_DIR: '/tmp/x',
      PATRON_CHAINS: chains({
        lightAccount: { implementations: [impl], proxyCodeHashes: [hash.toUpperCase().replace('0X', '0x')] },
      }),
    });
    assert.deepEqual(c.paymaster.chains[0]?.accounts, {
      lightAccount: { implementations: ['0xae8c656ad28F2B59a196AB61815C16A0AE1c3cba'], proxyCodeHashes: [hash] },
    });
    const problems = (accounts: unknown) => configError({ PATRON_CHAINS: chains(accounts) }).problems.join('\n');
    assert.match(
      problems({ nexus: {} }),
      /PATRON_CHAINS\[0\]\.accounts\.nexus is not a known key here \(known keys: simpleAccountV06, /,
    );
    assert.match(problems({ kernelV3: { factories: ['0x12'] } }), /factories must be addresses/);
    assert.match(
      problems({ kernelV3: { factories: [impl] }, kernelV2: { implementations: [impl] } }),
      /is listed for kernelV3 too/,
    );
  });

  test('production: no dev chain by default, and a signer key is required', () => {
    const err = configError({ NODE_ENV: 'production', PATRON_MASTER_KEY: KEY });
    assert.deepEqual(err.problems, [
      'a signer is required in production mode: PATRON_SIGNER_KEYSTORE, PATRON_SIGNER_PKCS11_MODULE, PATRON_SIGNER_KMS_KEY_ID or PATRON_SIGNER_PRIVATE_KEY',
    ]);
    const c = loadConfig({
      NODE_ENV: 'production',
      PATRON_MASTER_KEY: KEY,
      PATRON_SIGNER_KEYSTORE: 'ks.json',
      PATRON_SIGNER_KEYSTORE_PASSWORD: 'pw',
    });
    assert.equal(c.paymaster.devChain, false);
    assert.equal(c.paymaster.signer.kind, 'keystore');
  });

  test('a keystore needs its password', () => {
    assert.deepEqual(configError({ PATRON_SIGNER_KEYSTORE: 'ks.json' }).problems, [
      'PATRON_SIGNER_KEYSTORE_PASSWORD is required with PATRON_SIGNER_KEYSTORE',
    ]);
  });

  test('PATRON_CHAINS: parsed, EntryPoint defaulted to the canonical v0.6 address, errors name the entry', () => {
    const c = loadConfig({
      PATRON_CHAINS: JSON.stringify([
        { chainId: 8453, rpcUrl: 'https://rpc.example.com', paymaster: `0x${'1'.repeat(40)}` },
      ]),
    });
    assert.deepEqual(c.paymaster.chains, [
      {
        chainId: 8453,
        rpcUrl: 'https://rpc.example.com',
        paymaster: `0x${'1'.repeat(40)}`,
        entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
      },
    ]);
    assert.deepEqual(configError({ PATRON_CHAINS: '{not json' }).problems, [
      'PATRON_CHAINS must be a JSON array of {chainId, rpcUrl, paymaster, entryPoint?}',
    ]);
    assert.deepEqual(
      configError({
        PATRON_CHAINS: JSON.stringify([{ chainId: 1, rpcUrl: 'ftp://x', paymaster: `0x${'1'.repeat(40)}` }]),
      }).problems,
      ['PATRON_CHAINS[0]: rpcUrl must be an http(s) URL'],
    );
    const twice = JSON.stringify(
      [1, 1].map((chainId) => ({ chainId, rpcUrl: 'http://a', paymaster: `0x${'1'.repeat(40)}` })),
    );
    assert.deepEqual(configError({ PATRON_CHAINS: twice }).problems, [
      'PATRON_CHAINS[1].chainId: chain 1 is listed twice (PATRON_CHAINS[0] too); give each chain one entry',
    ]);
  });

  test('expiry bounds are checked', () => {
    assert.deepEqual(configError({ PATRON_EXPIRY_DEFAULT_SECONDS: '900', PATRON_EXPIRY_MAX_SECONDS: '600' }).problems, [
      'PATRON_EXPIRY_DEFAULT_SECONDS must not exceed PATRON_EXPIRY_MAX_SECONDS',
    ]);
  });
});

describe('PATRON_WORKERS', () => {
  test('defaults to 1; more needs PostgreSQL and no dev chain', () => {
    assert.equal(loadConfig({}).workers, 1);
    assert.deepEqual(configError({ PATRON_WORKERS: '2' }).problems, [
      'PATRON_WORKERS above 1 needs DATABASE_URL (PostgreSQL) and PATRON_DEV_CHAIN=false',
    ]);
    const c = loadConfig({ PATRON_WORKERS: '2', DATABASE_URL: 'postgres://db/p', PATRON_DEV_CHAIN: 'false' });
    assert.equal(c.workers, 2);
    assert.deepEqual(configError({ PATRON_WORKERS: '0' }).problems, [
      'PATRON_WORKERS must be an integer from 1 to 64, got "0"',
    ]);
  });
});

describe('PATRON_DEV_BUNDLER and PATRON_DEV_BUNDLER_PORT', () => {
  test('on with the dev chain, off without it; true without the dev chain is refused; the port is optional', () => {
    assert.deepEqual(loadConfig({}).devBundler, { enabled: true, port: undefined });
    assert.deepEqual(loadConfig({ PATRON_DEV_BUNDLER: 'false' }).devBundler, { enabled: false, port: undefined });
    assert.equal(loadConfig({ PATRON_DEV_CHAIN: 'false' }).devBundler.enabled, false);
    assert.deepEqual(loadConfig({ PATRON_DEV_BUNDLER_PORT: '4337' }).devBundler, { enabled: true, port: 4337 });
    assert.deepEqual(configError({ PATRON_DEV_BUNDLER: 'true', PATRON_DEV_CHAIN: 'false' }).problems, [
      'PATRON_DEV_BUNDLER=true needs the embedded dev chain (PATRON_DEV_CHAIN)',
    ]);
    assert.deepEqual(configError({ PATRON_DEV_BUNDLER_PORT: '0' }).problems, [
      'PATRON_DEV_BUNDLER_PORT must be an integer from 1 to 65535, got "0"',
    ]);
  });
});

describe('PATRON_DEV_CHAIN_FORK_URL, _BLOCK and _HEADERS', () => {
  test('off by default; a URL forks at its latest block unless a block is given; headers are a JSON object', () => {
    assert.equal(loadConfig({}).paymaster.devChainFork, undefined);
    assert.deepEqual(loadConfig({ PATRON_DEV_CHAIN_FORK_URL: 'https://sepolia.base.org' }).paymaster.devChainFork, {
      url: 'https://sepolia.base.org',
      blockNumber: undefined,
      httpHeaders: {},
    });
    const pinned = loadConfig({
      PATRON_DEV_CHAIN_FORK_URL: 'http://127.0.0.1:8545',
      PATRON_DEV_CHAIN_FORK_BLOCK: '34000000',
      PATRON_DEV_CHAIN_FORK_HEADERS: '{"x-api-key":"k"}',
    }).paymaster.devChainFork;
    assert.equal(pinned?.blockNumber, 34_000_000n);
    assert.deepEqual(pinned?.httpHeaders, { 'x-api-key': 'k' });
  });

  test('a URL that is not http(s), a block that is not a number, bad headers, or a fork without the dev chain are refused', () => {
    assert.deepEqual(configError({ PATRON_DEV_CHAIN_FORK_URL: 'sepolia.base.org' }).problems, [
      'PATRON_DEV_CHAIN_FORK_URL must be an http:// or https:// URL of a JSON-RPC endpoint',
    ]);
    assert.deepEqual(configError({ PATRON_DEV_CHAIN_FORK_URL: 'ws://127.0.0.1:8546' }).problems, [
      'PATRON_DEV_CHAIN_FORK_URL must be an http:// or https:// URL of a JSON-RPC endpoint',
    ]);
    assert.deepEqual(
      configError({ PATRON_DEV_CHAIN_FORK_URL: 'http://127.0.0.1:8545', PATRON_DEV_CHAIN_FORK_BLOCK: 'latest' })
        .problems,
      ['PATRON_DEV_CHAIN_FORK_BLOCK must be a block number (a decimal integer)'],
    );
    assert.deepEqual(
      configError({ PATRON_DEV_CHAIN_FORK_URL: 'http://127.0.0.1:8545', PATRON_DEV_CHAIN_FORK_HEADERS: '["k"]' })
        .problems,
      ['PATRON_DEV_CHAIN_FORK_HEADERS must be a JSON object of header names to string values, e.g. {"x-api-key":"…"}'],
    );
    assert.deepEqual(configError({ PATRON_DEV_CHAIN_FORK_BLOCK: '5' }).problems, [
      'PATRON_DEV_CHAIN_FORK_BLOCK needs PATRON_DEV_CHAIN_FORK_URL',
    ]);
    assert.deepEqual(
      configError({ PATRON_DEV_CHAIN_FORK_URL: 'http://127.0.0.1:8545', PATRON_DEV_CHAIN: 'false' }).problems,
      ['PATRON_DEV_CHAIN_FORK_URL needs the embedded dev chain (PATRON_DEV_CHAIN)'],
    );
  });

  test("a fork may sit beside a configured chain 31337: the fork's id is the endpoint's, read at start", () => {
    const chain31337 = JSON.stringify([
      { chainId: 31337, rpcUrl: 'http://127.0.0.1:8545', paymaster: '0x1111111111111111111111111111111111111111' },
    ]);
    configError({ PATRON_CHAINS: chain31337 });
    const c = loadConfig({ PATRON_CHAINS: chain31337, PATRON_DEV_CHAIN_FORK_URL: 'https://sepolia.base.org' });
    assert.equal(c.paymaster.chains[0]?.chainId, 31337);
  });
});

describe('dashboard and request log settings', () => {
  test('defaults: /dashboard, 60 min idle, 12 h sessions, 0.1 ETH warning, 7 days and 5M rows of request log', () => {
    const c = loadConfig({});
    assert.deepEqual(c.dashboard, {
      basePath: '/dashboard',
      sessionIdleMs: 60 * 60_000,
      sessionMaxMs: 12 * 3_600_000,
      depositWarningWei: 10n ** 17n,
    });
    assert.deepEqual(c.requestLog, { retentionDays: 7, maxRows: 5_000_000 });
  });

  test('every setting is read', () => {
    const c = loadConfig({
      PATRON_DASHBOARD_BASE_PATH: '/ops/patron-ui',
      PATRON_SESSION_IDLE_MINUTES: '15',
      PATRON_SESSION_MAX_HOURS: '2',
      PATRON_DEPOSIT_WARNING_ETH: '2.5',
      PATRON_REQUEST_LOG_RETENTION_DAYS: '0',
      PATRON_REQUEST_LOG_MAX_ROWS: '20000',
    });
    assert.equal(c.dashboard.basePath, '/ops/patron-ui');
    assert.equal(c.dashboard.sessionIdleMs, 15 * 60_000);
    assert.equal(c.dashboard.sessionMaxMs, 2 * 3_600_000);
    assert.equal(c.dashboard.depositWarningWei, 2_500_000_000_000_000_000n);
    assert.deepEqual(c.requestLog, { retentionDays: 0, maxRows: 20_000 });
  });

  test('bad values are named', () => {
    for (const [name, value, pattern] of [
      ['PATRON_DASHBOARD_BASE_PATH', 'dashboard', /PATRON_DASHBOARD_BASE_PATH must be a path/],
      ['PATRON_DASHBOARD_BASE_PATH', '/dashboard/', /PATRON_DASHBOARD_BASE_PATH must be a path/],
      ['PATRON_DASHBOARD_BASE_PATH', '/api/ui', /PATRON_DASHBOARD_BASE_PATH must be a path/],
      ['PATRON_DASHBOARD_BASE_PATH', '/healthz', /PATRON_DASHBOARD_BASE_PATH must be a path/],
      ['PATRON_SESSION_IDLE_MINUTES', '0', /PATRON_SESSION_IDLE_MINUTES must be an integer from 1/],
      ['PATRON_SESSION_MAX_HOURS', 'x', /PATRON_SESSION_MAX_HOURS must be an integer/],
      ['PATRON_DEPOSIT_WARNING_ETH', '-1', /PATRON_DEPOSIT_WARNING_ETH must be an amount of ETH/],
      ['PATRON_DEPOSIT_WARNING_ETH', '1e18', /PATRON_DEPOSIT_WARNING_ETH must be an amount of ETH/],
      [
        'PATRON_REQUEST_LOG_RETENTION_DAYS',
        '4000',
        /PATRON_REQUEST_LOG_RETENTION_DAYS must be an integer from 0 to 3650/,
      ],
      ['PATRON_REQUEST_LOG_MAX_ROWS', '10', /PATRON_REQUEST_LOG_MAX_ROWS must be an integer from 1000/],
    ] as const) {
      assert.match(configError({ [name]: value }).message, pattern, `${name}=${value}`);
    }
  });
});

describe('token mode: PATRON_CHAINS tokens and prices, PATRON_PRICE_REFRESH_SECONDS', () => {
  const PAYMASTER = `0x${'1'.repeat(40)}`;
  const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
  const FEED = '0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419';
  const chainsEnv = (extra: Record<string, unknown>) =>
    JSON.stringify([{ chainId: 1, rpcUrl: 'https://rpc.example.com', paymaster: PAYMASTER, ...extra }]);
  const problems = (extra: Record<string, unknown>) => configError({ PATRON_CHAINS: chainsEnv(extra) }).problems;

  test('prices refresh every 30 s unless PATRON_PRICE_REFRESH_SECONDS says otherwise', () => {
    assert.equal(loadConfig({}).paymaster.priceRefreshSeconds, 30);
    assert.equal(loadConfig({ PATRON_PRICE_REFRESH_SECONDS: '5' }).paymaster.priceRefreshSeconds, 5);
    assert.deepEqual(configError({ PATRON_PRICE_REFRESH_SECONDS: '0' }).problems, [
      'PATRON_PRICE_REFRESH_SECONDS must be an integer from 1 to 3600, got "0"',
    ]);
  });

  test('tokens and price sources are parsed, checksummed, defaulted and made canonical', () => {
    const c = loadConfig({
      PATRON_CHAINS: chainsEnv({
        nativeUsd: { type: 'chainlink', aggregator: FEED, maxAgeSeconds: 3600 },
        tokens: [
          { address: USDC, price: { type: 'coingecko', id: 'usd-coin' }, premiumPercentage: 10, permit: true },
          {
            address: `0x${'2'.repeat(40)}`,
            logoUrl: 'https://example.com/t.png',
            premiumPercentage: '0.50',
            price: {
              type: 'coingecko',
              id: 'tether',
              baseUrl: 'https://pro-api.coingecko.com/api/v3/',
              apiKey: 'k',
              apiKeyHeader: 'x-cg-pro-api-key',
              maxAgeSeconds: 120,
            },
          },
          { address: `0x${'3'.repeat(40)}`, price: { type: 'fixed', usd: '1.00' } },
        ],
      }),
    });
    const chain = c.paymaster.chains[0];
    assert.deepEqual(chain?.nativeUsd, {
      type: 'chainlink',
      aggregator: '0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419',
      maxAgeSeconds: 3600,
    });
    assert.deepEqual(chain?.tokens, [
      {
        address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
        logoUrl: '',
        premiumPercentage: '10',
        price: {
          type: 'coingecko',
          id: 'usd-coin',
          baseUrl: 'https://api.coingecko.com/api/v3',
          apiKeyHeader: 'x-cg-demo-api-key',
          maxAgeSeconds: 600,
        },
        permit: true,
      },
      {
        address: `0x${'2'.repeat(40)}`,
        logoUrl: 'https://example.com/t.png',
        premiumPercentage: '0.5',
        price: {
          type: 'coingecko',
          id: 'tether',
          baseUrl: 'https://pro-api.coingecko.com/api/v3',
          apiKey: 'k',
          apiKeyHeader: 'x-cg-pro-api-key',
          maxAgeSeconds: 120,
        },
        permit: false,
      },
      {
        address: `0x${'3'.repeat(40)}`,
        logoUrl: '',
        premiumPercentage: '0',
        price: { type: 'fixed', usd: '1' },
        permit: false,
      },
    ]);
  });

  test('a chain without tokens has neither key', () => {
    const chain = loadConfig({ PATRON_CHAINS: chainsEnv({}) }).paymaster.chains[0];
    assert.ok(chain !== undefined && !('tokens' in chain) && !('nativeUsd' in chain));
  });

  test('errors name the path inside PATRON_CHAINS', () => {
    const native = { type: 'fixed', usd: '3000' };
    const token = (extra: Record<string, unknown>) => ({ address: USDC, price: { type: 'fixed', usd: '1' }, ...extra });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tokens: [token({})] }, 'PATRON_CHAINS[0]: nativeUsd is required when tokens are listed'],
      [
        { nativeUsd: native, tokens: [token({}), token({ address: USDC.toUpperCase().replace('0X', '0x') })] },
        'PATRON_CHAINS[0].tokens[1]: token 0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48 is listed twice',
      ],
      [
        { nativeUsd: native, tokens: [token({ premiumPercentage: '100.5' })] },
        'PATRON_CHAINS[0].tokens[0]: premiumPercentage must be a decimal from 0 to 100',
      ],
      [
        { nativeUsd: native, tokens: [token({ premiumPercentage: -1 })] },
        'PATRON_CHAINS[0].tokens[0]: premiumPercentage must be a decimal from 0 to 100',
      ],
      [
        { nativeUsd: native, tokens: [token({ permit: 'yes' })] },
        'PATRON_CHAINS[0].tokens[0]: permit must be true or false',
      ],
      [
        { nativeUsd: { type: 'oracle' } },
        'PATRON_CHAINS[0].nativeUsd: price source must be an object with "type" one of "fixed", "chainlink", "coingecko"',
      ],
      [{ nativeUsd: { type: 'fixed', usd: '0' } }, 'PATRON_CHAINS[0].nativeUsd: usd must be positive'],
      [
        { nativeUsd: { type: 'fixed', usd: 3000 } },
        'PATRON_CHAINS[0].nativeUsd: usd must be a decimal string such as "1.00"',
      ],
      [
        { nativeUsd: { type: 'chainlink', aggregator: FEED } },
        'PATRON_CHAINS[0].nativeUsd: maxAgeSeconds must be a number of seconds',
      ],
      [
        { nativeUsd: { type: 'chainlink', aggregator: '0x12', maxAgeSeconds: 60 } },
        'PATRON_CHAINS[0].nativeUsd: aggregator must be an address',
      ],
      [
        { nativeUsd: { type: 'coingecko', id: 'Ethereum,bitcoin' } },
        'PATRON_CHAINS[0].nativeUsd: id must be a CoinGecko coin id such as "usd-coin"',
      ],
      [
        { nativeUsd: { type: 'coingecko', id: 'ethereum', baseUrl: 'https://api.example.com/v3?x_cg_demo_api_key=k' } },
        'PATRON_CHAINS[0].nativeUsd: baseUrl must be an http(s) URL without credentials, query or fragment',
      ],
      [
        { nativeUsd: native, tokens: [token({ logoUrl: 'javascript:alert(1)' })] },
        'PATRON_CHAINS[0].tokens[0]: logoUrl must be an http(s) URL',
      ],
      [
        { nativeUsd: native, tokens: [{ address: USDC }] },
        'PATRON_CHAINS[0].tokens[0]: price source must be an object with "type" one of "fixed", "chainlink", "coingecko"',
      ],
    ];
    for (const [extra, message] of cases) assert.deepEqual(problems(extra), [message], JSON.stringify(extra));
  });
});
