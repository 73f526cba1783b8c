import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
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
  /** Its SOFTHSM2_CONF (set for the process by this call). */
  conf: string;
  /** Takes the token out of the token directory (a C_Initialize after this finds no token labelled so). */
  hide(): void;
  /** Puts it back. */
  restore(): void;
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
    conf,
    hide: () => {
      fs.renameSync(tokens, path.join(dir, 'hidden'));
      fs.mkdirSync(tokens);
    },
    restore: () => {
      fs.rmdirSync(tokens);
      fs.renameSync(path.join(dir, 'hidden'), tokens);
    },
    close: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A token restart as the signer in this process sees one, made through a second handle on the same module
 * (SoftHSM2 is a library in the process, so its state is the module's, shared by every handle): `sessions` closes
 * every session of the token (C_CloseAllSessions: what a token's restart does to the sessions and the login),
 * `module` finalises the module (C_Finalize: what a library reconnecting to its HSM does; every handle it gave out
 * is then invalid).
 */
export function restartSoftHsm(args: { setting: Pkcs11SignerSetting; lose: 'sessions' | 'module' }): void {
  const pkcs11 = createRequire(import.meta.url)('pkcs11js') as typeof import('pkcs11js');
  const lib = new pkcs11.PKCS11();
  lib.load(args.setting.module);
  try {
    try {
      lib.C_Initialize({ flags: pkcs11.CKF_OS_LOCKING_OK });
    } catch (err) {
      // The signer under test initialised it: the usual case.
      if ((err as { code?: unknown }).code !== pkcs11.CKR_CRYPTOKI_ALREADY_INITIALIZED) throw err;
    }
    if (args.lose === 'module') {
      lib.C_Finalize();
      return;
    }
    const slot = lib
      .C_GetSlotList(true)
      .find((s) => lib.C_GetTokenInfo(s).label.trimEnd() === args.setting.tokenLabel.trimEnd());
    if (slot === undefined) throw new Error(`no token labelled ${args.setting.tokenLabel}`);
    lib.C_CloseAllSessions(slot);
  } finally {
    lib.close();
  }
}
