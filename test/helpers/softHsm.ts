import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Pkcs11SignerSetting } from '../../src/config/signerSettings.js';

/** Debian's softhsm2 package (.ci/run installs it). */
export const SOFTHSM_MODULE = process.env.PATRON_SOFTHSM_MODULE ?? '/usr/lib/softhsm/libsofthsm2.so';

/**
 * A throwaway SoftHSM2 token in a temp dir: its config named by SOFTHSM2_CONF (which the library reads at
 * C_Initialize, so it is set before any token is opened in this process), initialised with softhsm2-util.
 */
export function createSoftHsmToken(label = 'patron-test'): {
  setting: Pkcs11SignerSetting;
  env: Record<string, string>;
  close(): void;
} {
  if (!fs.existsSync(SOFTHSM_MODULE)) {
    throw new Error(`${SOFTHSM_MODULE} is missing: install Debian's softhsm2 (apt-get install softhsm2; .ci/run does)`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-softhsm-'));
  const tokens = path.join(dir, 'tokens');
  fs.mkdirSync(tokens);
  const conf = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  const pin = '246810';
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', '13579'], {
    env: { ...process.env, SOFTHSM2_CONF: conf },
    stdio: 'pipe',
  });
  return {
    setting: {
      kind: 'pkcs11',
      module: SOFTHSM_MODULE,
      tokenLabel: label,
      pin: { value: pin },
      keyLabel: 'patron-signer',
      sessions: 4,
    },
    env: {
      PATRON_SIGNER_PKCS11_MODULE: SOFTHSM_MODULE,
      PATRON_SIGNER_PKCS11_TOKEN_LABEL: label,
      PATRON_SIGNER_PKCS11_PIN: pin,
    },
    close: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
