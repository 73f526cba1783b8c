import type { Address } from 'viem';
import type { TankSignerRef } from '../config/tankSignerRef.js';
import type { CryptoBackend } from '../crypto/cryptoBackend.js';
import { ValidationError } from '../errors/PatronError.js';
import { createTankSigners } from './tankSigner.js';

/**
 * The owner EOA of a tank's key: the key is opened the way the sign path opens it (mee/tankSigner.ts: a keystore
 * decrypted, a PKCS#11 or KMS key's public key read) and closed again. Creating a tank proves the key opens, so no
 * tank is recorded whose key Patron cannot use.
 */
export async function readTankOwner(args: {
  readonly ref: TankSignerRef;
  readonly crypto: CryptoBackend;
}): Promise<Address> {
  const signers = createTankSigners({ crypto: args.crypto });
  try {
    return (await signers.signerFor(args.ref)).address;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ValidationError(`the tank's ${args.ref.kind} signer cannot be opened: ${why}`);
  } finally {
    await signers.close();
  }
}
