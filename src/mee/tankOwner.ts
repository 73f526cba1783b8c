import fs from 'node:fs';
import type { Address } from 'viem';
import type { SignerSetting } from '../config/signerSettings.js';
import type { TankSignerRef } from '../config/tankSignerRef.js';
import type { CryptoBackend } from '../crypto/cryptoBackend.js';
import { ValidationError } from '../errors/PatronError.js';
import { loadPaymasterSigner } from '../paymaster/signer/loadPaymasterSigner.js';

/** A secret file's text, its trailing newline dropped (as `echo secret > file` writes it). */
function secretFile(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? String(err.code) : 'unreadable';
    throw new ValidationError(`the tank signer's ${what} ${file} cannot be read (${code})`);
  }
}

/** The back end's setting for a reference: the same shapes the paymaster's key uses, its secrets read from files. */
export function tankSignerSetting(ref: TankSignerRef): SignerSetting {
  switch (ref.kind) {
    case 'keystore':
      return { kind: 'keystore', file: ref.file, password: secretFile(ref.passwordFile, 'password file') };
    case 'pkcs11':
      return {
        kind: 'pkcs11',
        module: ref.module,
        tokenLabel: ref.tokenLabel,
        pin: { file: ref.pinFile },
        keyLabel: ref.keyLabel,
        sessions: 1,
      };
    case 'kms':
      return { kind: 'kms', keyId: ref.keyId, region: ref.region, endpoint: ref.endpoint };
  }
}

/**
 * The owner EOA of a tank's key: the key is opened in its back end (a keystore decrypted, a PKCS#11 or KMS key's
 * public key read) and closed again. Creating a tank proves the key opens, so no tank is recorded whose key Patron
 * cannot use. (The MEE sign path opens it through mee/tankSigner.ts.)
 */
export async function readTankOwner(args: {
  readonly ref: TankSignerRef;
  readonly crypto: CryptoBackend;
}): Promise<Address> {
  let signer: Awaited<ReturnType<typeof loadPaymasterSigner>>;
  try {
    signer = await loadPaymasterSigner({ setting: tankSignerSetting(args.ref), crypto: args.crypto });
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    // The paymaster's messages name its PATRON_SIGNER_* settings; here the key is the tank's.
    const why =
      err instanceof Error
        ? err.message.replace(/;? ?check PATRON_SIGNER_[A-Z_0-9]+/g, '').replace(/PATRON_SIGNER_[A-Z_0-9]+ ?/g, '')
        : String(err);
    throw new ValidationError(`the tank's ${args.ref.kind} signer cannot be opened: ${why}`);
  }
  try {
    return signer.address;
  } finally {
    await signer.close();
  }
}
