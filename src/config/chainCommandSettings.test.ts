import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { loadChainCommandSettings } from './chainCommandSettings.js';
import { ConfigError, loadConfigWithoutSigner } from './config.js';

test('production without PATRON_MASTER_KEY or a signer: no refusal, the signer kept as the reason there is none', () => {
  const settings = loadChainCommandSettings({ PATRON_PRODUCTION: 'true', PORT: 'not read here' });
  assert.equal(settings.production, true);
  assert.ok('problems' in settings.signer);
  assert.match(settings.signer.problems.join(), /^a signer is required in production mode: PATRON_SIGNER_KEYSTORE/);
});

test('a signer source given is parsed; outside production the default is the data directory key', () => {
  const key = 'cd'.repeat(32);
  assert.deepEqual(loadChainCommandSettings({ NODE_ENV: 'production', PATRON_SIGNER_PRIVATE_KEY: key }).signer, {
    setting: { kind: 'privateKey', privateKeyHex: key },
  });
  assert.deepEqual(loadChainCommandSettings({ PATRON_DATA_DIR: 'state' }).signer, {
    setting: { kind: 'dataDir', dataDir: path.resolve('state') },
  });
});

test('refused (ConfigError): a PATRON_* name Patron does not know, an unreadable production switch', () => {
  assert.throws(() => loadChainCommandSettings({ PATRON_MASTER_KY: 'x' }), {
    name: 'ConfigError',
    problems: [
      'PATRON_MASTER_KY is not a setting Patron knows (did you mean PATRON_MASTER_KEY?): remove it, or see docs/reference/configuration.md',
    ],
  });
  assert.throws(() => loadChainCommandSettings({ PATRON_PRODUCTION: 'maybe' }), ConfigError);
});

test("the storage commands' configuration: no signer asked in production, the master key still", () => {
  const config = loadConfigWithoutSigner({ NODE_ENV: 'production', PATRON_MASTER_KEY: 'ab'.repeat(32) });
  assert.equal(config.production, true);
  assert.equal('signer' in config.paymaster, false);
  assert.throws(() => loadConfigWithoutSigner({ NODE_ENV: 'production' }), {
    problems: ['PATRON_MASTER_KEY is required in production mode (32 bytes as 64 hex characters)'],
  });
});
