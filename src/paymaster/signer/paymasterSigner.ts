import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Address, bytesToHex, hexToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import type { SignerSetting } from '../../config/chainSettings.js';
import { ensureSecretFile } from '../../config/ensureSecretFile.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import { decryptKeystore } from './keystore.js';

/**
 * The verifying signer of Patron's paymaster. The private key stays inside this closure: it is never logged,
 * never serialised (toJSON and util.inspect show only the address), and never leaves the process.
 */
export interface PaymasterSigner {
  readonly address: Address;
  readonly backend: CryptoBackend['name'];
  /** Signs a 32-byte digest; r || s || v. */
  sign(digest: Uint8Array): Uint8Array;
}

export function createPaymasterSigner(args: { privateKey: Uint8Array; crypto: CryptoBackend }): PaymasterSigner {
  const key = Uint8Array.from(args.privateKey);
  const address = privateKeyToAddress(bytesToHex(key));
  const signer: PaymasterSigner = {
    address,
    backend: args.crypto.name,
    sign: (digest) => args.crypto.signDigest(digest, key),
  };
  const safe = () => ({ address });
  Object.defineProperty(signer, 'toJSON', { value: safe });
  Object.defineProperty(signer, Symbol.for('nodejs.util.inspect.custom'), { value: safe });
  return signer;
}

export type SignerKeySource = SignerSetting;

const KEY_HEX = /^(0x)?[0-9a-fA-F]{64}$/;

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
    case 'keystore': {
      const json: unknown = JSON.parse(fs.readFileSync(source.file, 'utf8'));
      return decryptKeystore({ json, password: source.password, crypto });
    }
    case 'dataDir': {
      const file = path.join(source.dataDir, 'signer.key');
      const hex = ensureSecretFile(file, () => `0x${randomBytes(32).toString('hex')}`);
      if (!KEY_HEX.test(hex)) throw new Error(`${file} does not hold a 32-byte hex private key`);
      return hexToBytes(`0x${hex.replace(/^0x/, '')}`);
    }
  }
}
