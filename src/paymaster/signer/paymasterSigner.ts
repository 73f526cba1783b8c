import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Address, bytesToHex, hexToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import type { SignerSetting } from '../../config/chainSettings.js';
import { ensureSecretFile } from '../../config/ensureSecretFile.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import { StartRefusedError } from '../../errors/StartRefusedError.js';
import { decryptKeystore, KeystoreError } from './keystore.js';

/** Where a signer's key is: in this process, in a PKCS#11 token, in AWS KMS (docs/guides/signer-backends.md). */
export type SignerBackendName = 'local' | 'pkcs11' | 'kms';

/**
 * A signature of a 32-byte digest: r ‖ s ‖ v (65 bytes, s low, v = 27 or 28). A key in the process signs at once;
 * a device answers later. The signing path awaits only a Promise (signFields.ts), so the local key's hot path stays
 * synchronous.
 */
export type DigestSignature = Uint8Array | Promise<Uint8Array>;

/**
 * The verifying signer of Patron's paymaster, whatever holds its key. A local key stays inside its closure: it is
 * never logged, never serialised (toJSON and util.inspect show only the address), and never leaves the process.
 */
export interface PaymasterSigner {
  readonly address: Address;
  readonly backend: SignerBackendName;
  sign(digest: Uint8Array): DigestSignature;
  /** Releases the back end's sessions or connections (the process is stopping). */
  close(): Promise<void>;
}

/** Hides a signer's internals from logs: toJSON and util.inspect show its address and back end only. */
export function redacted<T extends PaymasterSigner>(signer: T): T {
  const safe = () => ({ address: signer.address, backend: signer.backend });
  Object.defineProperty(signer, 'toJSON', { value: safe });
  Object.defineProperty(signer, Symbol.for('nodejs.util.inspect.custom'), { value: safe });
  return signer;
}

export function createPaymasterSigner(args: { privateKey: Uint8Array; crypto: CryptoBackend }): PaymasterSigner {
  const key = Uint8Array.from(args.privateKey);
  const address = privateKeyToAddress(bytesToHex(key));
  return redacted({
    address,
    backend: 'local',
    sign: (digest) => args.crypto.signDigest(digest, key),
    close: async () => undefined,
  });
}

/** The sources that hold the key itself, in the process (the others sign remotely: pkcs11Signer.ts, kmsSigner.ts). */
export type SignerKeySource = Extract<SignerSetting, { kind: 'privateKey' | 'keystore' | 'dataDir' }>;

const KEY_HEX = /^(0x)?[0-9a-fA-F]{64}$/;

/**
 * The key of a keystore file, or a KeystoreError saying why not: no such file, not a readable JSON keystore, a wrong
 * password (`wrongPassword`), or not a keystore Patron opens. The configured signer (below) and a gas tank's owner key
 * (mee/tankSigner.ts) both open theirs here, each naming in its own terms where the file and password came from.
 */
export function readKeystoreFile(args: { file: string; password: string; crypto: CryptoBackend }): Uint8Array {
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(args.file, 'utf8'));
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'not a readable JSON keystore';
    throw new KeystoreError(why);
  }
  return decryptKeystore({ json, password: args.password, crypto: args.crypto });
}

/**
 * The keystore's key. A file that cannot be read or opened (missing, not a keystore, a wrong password) refuses the
 * start as a configuration error (exit 78: a restart cannot fix it), naming the file and the settings to check.
 */
function keystoreKey(file: string, password: string, crypto: CryptoBackend): Uint8Array {
  try {
    return readKeystoreFile({ file, password, crypto });
  } catch (err) {
    if (!(err instanceof KeystoreError)) throw err;
    throw new StartRefusedError(
      `PATRON_SIGNER_KEYSTORE ${file}: ${err.message}${err.message.startsWith('wrong') ? '; check PATRON_SIGNER_KEYSTORE_PASSWORD' : ''}`,
    );
  }
}

/**
 * Loads the signer key: from the environment, from an encrypted keystore file, or (embedded default) from
 * `<dataDir>/signer.key`, generated on first use with owner-only permissions.
 */
export function loadSignerKey(source: SignerKeySource, crypto: CryptoBackend): Uint8Array {
  switch (source.kind) {
    case 'privateKey':
      if (!KEY_HEX.test(source.privateKeyHex))
        throw new Error('the signer private key must be 32 bytes as 64 hex characters');
      return hexToBytes(`0x${source.privateKeyHex.replace(/^0x/, '')}`);
    case 'keystore':
      return keystoreKey(source.file, source.password, crypto);
    case 'dataDir': {
      const file = path.join(source.dataDir, 'signer.key');
      const hex = ensureSecretFile(file, () => `0x${randomBytes(32).toString('hex')}`);
      if (!KEY_HEX.test(hex)) throw new Error(`${file} does not hold a 32-byte hex private key`);
      return hexToBytes(`0x${hex.replace(/^0x/, '')}`);
    }
  }
}
