import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDappLimits } from '../dappSettings/dappLimits.js';
import { closestKey } from './closedObject.js';
import { ConfigError, loadConfig } from './config.js';
import { configuredChainIds, noChainProblem } from './servedChains.js';

/**
 * Unknown keys and impossible values in the JSON settings are refused with a message that names the key and the
 * fix: a misspelled key used to be dropped silently (a `paymasterV07` left the chain without its v0.7 paymaster).
 */
const PM = '0x00000000000000000000000000000000000000bb';
const PM2 = '0x00000000000000000000000000000000000000cc';
const KEY = 'ab'.repeat(32);

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail(`expected loadConfig(${JSON.stringify(env)}) to throw a ConfigError`);
}

const chain = (extra: Record<string, unknown>) =>
  JSON.stringify([{ chainId: 8453, rpcUrl: 'https://rpc.example', paymaster: PM, ...extra }]);

describe('PATRON_CHAINS: unknown keys are refused, naming the path and the key meant', () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [
      { paymasterV07: PM2 },
      'PATRON_CHAINS[0].paymasterV07 is not a known key here: did you mean paymasters.0.7 ("paymasters": {"0.7": "0x…"})?',
    ],
    [
      { paymaster_0_9: PM2 },
      'PATRON_CHAINS[0].paymaster_0_9 is not a known key here: did you mean paymasters.0.9 ("paymasters": {"0.9": "0x…"})?',
    ],
    [{ chainID: 1 }, 'PATRON_CHAINS[0].chainID is not a known key here: did you mean chainId?'],
    [{ rpcURL: 'https://x' }, 'PATRON_CHAINS[0].rpcURL is not a known key here: did you mean rpcUrl?'],
    [{ entrypoint: PM2 }, 'PATRON_CHAINS[0].entrypoint is not a known key here: did you mean entryPoint?'],
    [
      { maxOpCostWei: '1' },
      'PATRON_CHAINS[0].maxOpCostWei is not a known key here: maxOpCostWei belongs under "bounds": {"bounds":{"maxOpCostWei":"1"}}',
    ],
    [{ paymasters: { 'v0.7': PM2 } }, 'PATRON_CHAINS[0].paymasters.v0.7 is not a known key here: did you mean "0.7"?'],
    [
      { bounds: { maxOpCost: '1' } },
      'PATRON_CHAINS[0].bounds.maxOpCost is not a known key here: did you mean maxOpCostWei?',
    ],
    [
      { nativeUsd: { type: 'fixed', usd: '3000', maxAgeSeconds: 60 } },
      'PATRON_CHAINS[0].nativeUsd.maxAgeSeconds is not a known key here (known keys: type, usd)',
    ],
    [
      {
        nativeUsd: { type: 'fixed', usd: '3000' },
        tokens: [{ address: PM2, price: { type: 'fixed', usd: '1' }, premium: 5 }],
      },
      'PATRON_CHAINS[0].tokens[0].premium is not a known key here: did you mean premiumPercentage?',
    ],
    [
      { accounts: { lightaccount: {} } },
      'PATRON_CHAINS[0].accounts.lightaccount is not a known key here: did you mean lightAccount?',
    ],
    [
      { accounts: { lightAccount: { implementation: [PM2] } } },
      'PATRON_CHAINS[0].accounts.lightAccount.implementation is not a known key here: did you mean implementations?',
    ],
    [
      { colour: 'blue', size: 2 },
      'PATRON_CHAINS[0].colour is not a known key here (known keys: chainId, rpcUrl, paymaster, paymasters, entryPoint, nativeUsd, tokens, maxBlockTimeSeconds, bounds, l1Fee, accounts); also unknown: size',
    ],
  ];
  for (const [extra, message] of cases) {
    test(JSON.stringify(extra), () => {
      assert.deepEqual(problems({ PATRON_CHAINS: chain(extra) }), [message]);
    });
  }
});

describe('PATRON_CHAINS: impossible values are refused, naming the key', () => {
  const zero = `0x${'0'.repeat(40)}`;
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ paymaster: zero }, 'PATRON_CHAINS[0]: paymaster must not be the zero address'],
    [
      { paymasters: { '0.7': zero } },
      'PATRON_CHAINS[0].paymasters: each paymasters value must not be the zero address',
    ],
    [{ entryPoint: zero }, 'PATRON_CHAINS[0]: entryPoint must not be the zero address'],
    [
      { paymasters: { '0.7': PM2, '0.8': PM2 } },
      'PATRON_CHAINS[0]: paymasters.0.8 is 0x00000000000000000000000000000000000000cc, the same contract as paymasters.0.7: each EntryPoint version has its own paymaster',
    ],
    [
      { paymasters: { '0.7': PM } },
      'PATRON_CHAINS[0]: paymasters.0.7 is 0x00000000000000000000000000000000000000bb, the same contract as paymaster (v0.6): each EntryPoint version has its own paymaster',
    ],
    [{ chainId: 1.5 }, 'PATRON_CHAINS[0]: chainId must be a positive integer'],
    [{ chainId: 0 }, 'PATRON_CHAINS[0]: chainId must be a positive integer'],
  ];
  for (const [extra, message] of cases) {
    test(JSON.stringify(extra), () => {
      assert.deepEqual(problems({ PATRON_CHAINS: chain(extra) }), [message]);
    });
  }

  test('a chain id listed twice names both entries', () => {
    const twice = JSON.stringify([
      { chainId: 10, rpcUrl: 'https://a', paymaster: PM },
      { chainId: 8453, rpcUrl: 'https://b', paymaster: PM },
      { chainId: 10, rpcUrl: 'https://c', paymaster: PM2 },
    ]);
    assert.deepEqual(problems({ PATRON_CHAINS: twice }), [
      'PATRON_CHAINS[2].chainId: chain 10 is listed twice (PATRON_CHAINS[0] too); give each chain one entry',
    ]);
  });

  test("the dev chain's id while the dev chain runs is refused; with PATRON_DEV_CHAIN=false it is a chain like any", () => {
    const devId = chain({ chainId: 31337 });
    assert.deepEqual(problems({ PATRON_CHAINS: devId }), [
      "PATRON_CHAINS[0].chainId: 31337 is the embedded dev chain's id, which runs too; set PATRON_DEV_CHAIN=false to serve another chain 31337",
    ]);
    assert.equal(loadConfig({ PATRON_CHAINS: devId, PATRON_DEV_CHAIN: 'false' }).paymaster.chains[0]?.chainId, 31337);
  });
});

describe('PATRON_RATE_LIMITS: unknown keys and bad budgets are named', () => {
  const cases: Array<[string, string | string[]]> = [
    [
      '{"calls":{"perIP":{"points":600,"windowSeconds":60}}}',
      'PATRON_RATE_LIMITS.calls.perIP is not a known key here: did you mean perIp?',
    ],
    ['{"call":{}}', 'PATRON_RATE_LIMITS.call is not a known key here: did you mean calls?'],
    [
      '{"calls":{"perIp":{"points":600,"window":60}}}',
      [
        'PATRON_RATE_LIMITS.calls.perIp.windowSeconds: windowSeconds must be a whole number from 1 to 86400',
        'PATRON_RATE_LIMITS.calls.perIp.window is not a known key here: did you mean windowSeconds?',
      ],
    ],
    [
      '{"calls":{"perIp":{"points":0,"windowSeconds":60}}}',
      'PATRON_RATE_LIMITS.calls.perIp.points: points must be a whole number from 1 to 100000000',
    ],
    ['[1]', 'PATRON_RATE_LIMITS must be a JSON object'],
  ];
  for (const [value, message] of cases) {
    test(value, () => {
      assert.deepEqual(problems({ PATRON_RATE_LIMITS: value }), Array.isArray(message) ? message : [message]);
    });
  }
});

describe("a dApp's limits (patron dapp limits --set): a key one level off is named with where it belongs", () => {
  const cases: Array<[unknown, string]> = [
    [
      { maxOpCostWei: '1' },
      'limits.maxOpCostWei is not a known key here: maxOpCostWei belongs under "bounds": {"bounds":{"maxOpCostWei":"1"}}',
    ],
    [
      { simulations: { perKey: { points: 1, windowSeconds: 1 } } },
      'limits.simulations is not a known key here: simulations belongs under "rateLimits": {"rateLimits":{"simulations":{"perKey":{"points":1,"windowSeconds":1}}}}',
    ],
    [
      { '8453': { bounds: {} } },
      'limits.8453 is not a known key here: 8453 belongs under "chains": {"chains":{"8453":{"bounds":{}}}}',
    ],
    [
      { chains: { '8453': { tipMultiplier: 2 } } },
      'limits.chains.8453.tipMultiplier is not a known key here: tipMultiplier belongs under "bounds": {"bounds":{"tipMultiplier":2}}',
    ],
    [{ bound: {} }, 'limits.bound is not a known key here: did you mean bounds?'],
    [
      { bounds: { maxOpCostWei: '-1' } },
      'limits.bounds: maxOpCostWei must be a whole number of at least 1 (a decimal string)',
    ],
    [
      { bounds: { maxOpCostwei: '1' } },
      'limits.bounds.maxOpCostwei is not a known key here: did you mean maxOpCostWei?',
    ],
    [[1], 'limits must be a JSON object such as {"bounds":{"maxOpCostWei":"10000000000000000"}}'],
    ['x', 'limits must be a JSON object such as {"bounds":{"maxOpCostWei":"10000000000000000"}}'],
  ];
  for (const [limits, message] of cases) {
    test(JSON.stringify(limits), () => {
      assert.deepEqual(parseDappLimits(limits), { problem: message });
    });
  }

  test('valid limits still parse', () => {
    const r = parseDappLimits({ bounds: { maxOpCostWei: '1' }, chains: { '10': { bounds: { tipMultiplier: 2 } } } });
    assert.ok('limits' in r);
    assert.equal(r.limits.bounds?.maxOpCostWei, 1n);
  });
});

describe('closestKey', () => {
  test('case and separators, a short cut, or up to 2 edits; nothing for a far key', () => {
    const known = ['chainId', 'rpcUrl', 'maxOpCostWei', 'bounds'];
    assert.equal(closestKey('chain_id', known), 'chainId');
    assert.equal(closestKey('maxOpCost', known), 'maxOpCostWei');
    assert.equal(closestKey('bonds', known), 'bounds');
    assert.equal(closestKey('colour', known), undefined);
  });
});

describe('served chains and production with none', () => {
  test('the dev chain and PATRON_CHAINS are what a deployment serves', () => {
    assert.deepEqual(configuredChainIds(loadConfig({}).paymaster), [31337]);
    assert.deepEqual(
      configuredChainIds(loadConfig({ PATRON_CHAINS: chain({ chainId: 10 }), PATRON_DEV_CHAIN: 'false' }).paymaster),
      [10],
    );
    assert.deepEqual(configuredChainIds(loadConfig({ PATRON_CHAINS: chain({ chainId: 10 }) }).paymaster), [10, 31337]);
  });

  test('production with no chain is refused at start with what to set; the dev defaults start with none', () => {
    const production = loadConfig({ NODE_ENV: 'production', PATRON_MASTER_KEY: KEY, PATRON_SIGNER_PRIVATE_KEY: KEY });
    assert.equal(
      noChainProblem(production),
      'Production mode serves no chain: set PATRON_CHAINS, e.g. [{"chainId":8453,"rpcUrl":"https://…","paymasters":{"0.7":"0x…"}}] (deploy the paymaster with `patron paymaster deploy`), or PATRON_DEV_CHAIN=true to run the in-process dev chain',
    );
    assert.equal(noChainProblem(loadConfig({})), undefined, 'dev defaults: the embedded dev chain');
    const withChain = loadConfig({
      NODE_ENV: 'production',
      PATRON_MASTER_KEY: KEY,
      PATRON_SIGNER_PRIVATE_KEY: KEY,
      PATRON_CHAINS: chain({}),
    });
    assert.equal(noChainProblem(withChain), undefined);
    // Outside production a deployment without chains is a test or CLI set-up, not refused.
    assert.equal(noChainProblem(loadConfig({ PATRON_DEV_CHAIN: 'false' })), undefined);
  });
});
