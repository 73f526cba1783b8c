import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { jsCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { encryptKeystore } from '../src/paymaster/signer/keystore.js';
import { spawnService } from './helpers/serviceProcess.js';

/**
 * Starts the real process (src/main.ts) refuses with 78 (sysexits' EX_CONFIG: no restart fixes them, and systemd's
 * RestartPreventExitStatus=78 stops the loop), each naming what to change.
 */
test('a PATRON_* setting Patron does not know refuses the start, exit 78, naming the nearest known one', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-typo-'));
  try {
    // A typo of PATRON_SOLVENCY_FLOOR_WEI: before, the start went on with the default floor.
    const service = spawnService({ PATRON_DATA_DIR: dataDir, PATRON_SOLVENCY_FLOOR: '5' });
    const code = await service.exitCode(30_000);
    const out = service.output();
    assert.equal(code, 78, out);
    assert.match(
      out,
      /PATRON_SOLVENCY_FLOOR is not a setting Patron knows \(did you mean PATRON_SOLVENCY_FLOOR_WEI\?\)/,
    );
    assert.doesNotMatch(out, /Patron is listening/);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a keystore the password does not open refuses the start, exit 78, naming the file and the setting', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-keystore-'));
  const key = `0x${'cd'.repeat(32)}` as const;
  const keystore = path.join(dataDir, 'signer.json');
  fs.writeFileSync(
    keystore,
    JSON.stringify(
      encryptKeystore({
        privateKey: Buffer.from(key.slice(2), 'hex'),
        password: 'the right password',
        address: privateKeyToAccount(key).address,
        crypto: jsCryptoBackend,
        scryptN: 2 ** 10,
      }),
    ),
  );
  try {
    for (const [file, said] of [
      [keystore, /wrong keystore password \(MAC mismatch\); check PATRON_SIGNER_KEYSTORE_PASSWORD/],
      [path.join(dataDir, 'missing.json'), /missing\.json: no such file/],
    ] as const) {
      const service = spawnService({
        PATRON_DATA_DIR: dataDir,
        PATRON_SIGNER_KEYSTORE: file,
        PATRON_SIGNER_KEYSTORE_PASSWORD: 'a wrong password',
      });
      const code = await service.exitCode(30_000);
      const out = service.output();
      assert.equal(code, 78, out);
      assert.match(out, /Patron failed to start: PATRON_SIGNER_KEYSTORE /);
      assert.match(out, said);
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
