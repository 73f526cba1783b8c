import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.js';

const PM = '0x1111111111111111111111111111111111111111';
const entry = (more: Record<string, unknown> = {}) =>
  JSON.stringify([{ chainId: 8453, paymaster: PM, mode: 'send', targetWei: '5', dailyLimitWei: '10', ...more }]);
const problems = (env: Record<string, string>): readonly string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

test('the keeper is off by default: no paymaster, no funding key, whatever the signer', () => {
  const c = loadConfig({ PATRON_SIGNER_PRIVATE_KEY: 'ab'.repeat(32) });
  assert.deepEqual(c.keeper.paymasters, []);
  assert.equal(c.keeper.funder, undefined, 'never the paymaster signer by default');
});

test('a listed paymaster with its funding key, under its own prefix', () => {
  const c = loadConfig({
    PATRON_KEEPER: entry({ minimumWei: '2', margin: '1.25', leadTimeSeconds: 60 }),
    PATRON_KEEPER_FUNDER_PRIVATE_KEY: 'cd'.repeat(32),
    PATRON_KEEPER_GAS_RESERVE_WEI: '7',
  });
  const [p] = c.keeper.paymasters;
  assert.equal(p?.paymaster, PM);
  assert.equal(p?.marginBps, 12_500n);
  assert.equal(p?.minimumWei, 2n);
  assert.equal(c.keeper.gasReserveWei, 7n);
  assert.deepEqual(c.keeper.funder, { kind: 'privateKey', privateKeyHex: 'cd'.repeat(32) });
});

test('refused: sending without a funding key, a bad entry, a PKCS#11 funder without its own key label', () => {
  assert.match(problems({ PATRON_KEEPER: entry() }).join('\n'), /needs a funding key: PATRON_KEEPER_FUNDER_KEYSTORE/);
  // A proposal needs none: the Safe pays.
  assert.deepEqual(problems({ PATRON_KEEPER: entry({ mode: 'propose' }) }), []);
  assert.match(problems({ PATRON_KEEPER: entry({ mode: 'always' }) }).join('\n'), /PATRON_KEEPER\[0\]\.mode/);
  assert.match(
    problems({ PATRON_KEEPER: entry({ minimumWei: '5' }), PATRON_KEEPER_FUNDER_PRIVATE_KEY: 'cd'.repeat(32) }).join(),
    /targetWei must be above minimumWei/,
  );
  assert.match(
    problems({ PATRON_KEEPER_FUNDER_PRIVATE_KEY: 'xyz' }).join(),
    /PATRON_KEEPER_FUNDER_PRIVATE_KEY must be/,
  );
  assert.match(
    problems({
      PATRON_KEEPER_FUNDER_PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so',
      PATRON_KEEPER_FUNDER_PKCS11_TOKEN_LABEL: 't',
      PATRON_KEEPER_FUNDER_PKCS11_PIN: '1234',
    }).join(),
    /PATRON_KEEPER_FUNDER_PKCS11_KEY_LABEL is required/,
  );
});
