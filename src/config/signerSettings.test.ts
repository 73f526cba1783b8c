import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.js';
import { signerFromEnv } from './signerSettings.js';

const dataDir = '/var/lib/patron';
const from = (env: Record<string, string>, production = false) => signerFromEnv({ env, production, dataDir });
const PKCS11 = {
  PATRON_SIGNER_PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so',
  PATRON_SIGNER_PKCS11_TOKEN_LABEL: 'patron',
  PATRON_SIGNER_PKCS11_PIN: '1234',
};

test('PKCS#11: module, token label, PIN (or PIN file), key label defaulted, sessions', () => {
  assert.deepEqual(from(PKCS11), {
    signer: {
      kind: 'pkcs11',
      module: '/usr/lib/softhsm/libsofthsm2.so',
      tokenLabel: 'patron',
      pin: { value: '1234' },
      keyLabel: 'patron-signer',
      sessions: 4,
    },
    problems: [],
  });
  const withFile = from({
    ...PKCS11,
    PATRON_SIGNER_PKCS11_PIN: '',
    PATRON_SIGNER_PKCS11_PIN_FILE: 'pin.txt',
    PATRON_SIGNER_PKCS11_KEY_LABEL: 'pm-1',
    PATRON_SIGNER_PKCS11_SESSIONS: '8',
  }).signer;
  assert.ok(withFile?.kind === 'pkcs11');
  assert.deepEqual(
    [withFile.pin, withFile.keyLabel, withFile.sessions],
    [{ file: path.resolve('pin.txt') }, 'pm-1', 8],
  );
});

test('PKCS#11 refusals name the variable', () => {
  assert.deepEqual(from({ ...PKCS11, PATRON_SIGNER_PKCS11_TOKEN_LABEL: '' }).problems, [
    'PATRON_SIGNER_PKCS11_TOKEN_LABEL is required with PATRON_SIGNER_PKCS11_MODULE',
  ]);
  assert.deepEqual(from({ ...PKCS11, PATRON_SIGNER_PKCS11_PIN_FILE: 'pin.txt' }).problems, [
    'give the token PIN in one of PATRON_SIGNER_PKCS11_PIN or PATRON_SIGNER_PKCS11_PIN_FILE',
  ]);
  assert.deepEqual(from({ ...PKCS11, PATRON_SIGNER_PKCS11_SESSIONS: '0' }).problems, [
    'PATRON_SIGNER_PKCS11_SESSIONS must be an integer from 1 to 64, got "0"',
  ]);
});

test('KMS: key id, optional region and endpoint', () => {
  assert.deepEqual(from({ PATRON_SIGNER_KMS_KEY_ID: 'alias/patron' }).signer, {
    kind: 'kms',
    keyId: 'alias/patron',
    region: undefined,
    endpoint: undefined,
  });
  assert.deepEqual(
    from({
      PATRON_SIGNER_KMS_KEY_ID: 'k',
      PATRON_SIGNER_KMS_REGION: 'eu-west-1',
      PATRON_SIGNER_KMS_ENDPOINT: 'https://vpce.kms.example',
    }).signer,
    { kind: 'kms', keyId: 'k', region: 'eu-west-1', endpoint: 'https://vpce.kms.example' },
  );
  assert.deepEqual(from({ PATRON_SIGNER_KMS_KEY_ID: 'k', PATRON_SIGNER_KMS_ENDPOINT: 'not a url' }).problems, [
    'PATRON_SIGNER_KMS_ENDPOINT must be an absolute URL',
  ]);
});

test('one source at most; production takes any but the plain-text data-directory key', () => {
  assert.deepEqual(from({ ...PKCS11, PATRON_SIGNER_KMS_KEY_ID: 'k' }).problems, [
    'set one signer source, not PATRON_SIGNER_PKCS11_MODULE and PATRON_SIGNER_KMS_KEY_ID',
  ]);
  assert.deepEqual(from({}).signer, { kind: 'dataDir', dataDir });
  assert.match(from({}, true).problems.join(), /a signer is required in production mode/);
  for (const env of [PKCS11, { PATRON_SIGNER_KMS_KEY_ID: 'k' }]) {
    const config = loadConfig({ NODE_ENV: 'production', PATRON_MASTER_KEY: 'ab'.repeat(32), ...env });
    assert.notEqual(config.paymaster.signer.kind, 'dataDir');
  }
  assert.throws(() => loadConfig({ NODE_ENV: 'production', PATRON_MASTER_KEY: 'ab'.repeat(32) }), ConfigError);
});
