import {
  createCipheriv,
  createDecipheriv,
  pbkdf2Sync,
  randomBytes,
  randomUUID,
  scryptSync,
  timingSafeEqual,
} from 'node:crypto';
import { z } from 'zod';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';

/**
 * Encrypted key files in the Web3 Secret Storage format (version 3), as written by geth, Foundry's
 * `cast wallet` and ethers: AES-128-CTR under a scrypt (or PBKDF2) key, with a keccak MAC that tells a wrong
 * password apart from a corrupted file.
 */
const hex = z.string().regex(/^(0x)?[0-9a-fA-F]*$/);
const keystoreSchema = z.object({
  version: z.literal(3),
  crypto: z.object({
    cipher: z.literal('aes-128-ctr'),
    ciphertext: hex,
    cipherparams: z.object({ iv: hex }),
    mac: hex,
    kdf: z.enum(['scrypt', 'pbkdf2']),
    kdfparams: z.union([
      z.object({ n: z.number().int(), r: z.number().int(), p: z.number().int(), dklen: z.number().int(), salt: hex }),
      z.object({ c: z.number().int(), prf: z.literal('hmac-sha256'), dklen: z.number().int(), salt: hex }),
    ]),
  }),
});
export type Keystore = z.infer<typeof keystoreSchema>;

const fromHex = (s: string) => Buffer.from(s.replace(/^0x/, ''), 'hex');

export class KeystoreError extends Error {
  override readonly name = 'KeystoreError';
}

function deriveKey(params: Keystore['crypto']['kdfparams'], password: string): Buffer {
  if ('n' in params) {
    // scrypt needs 128·N·r bytes; allow that much (geth's default N = 2^18 needs 256 MiB).
    return scryptSync(password, fromHex(params.salt), params.dklen, {
      N: params.n,
      r: params.r,
      p: params.p,
      maxmem: 256 * params.n * params.r + 1024 * 1024,
    });
  }
  return pbkdf2Sync(password, fromHex(params.salt), params.c, params.dklen, 'sha256');
}

export function decryptKeystore(args: { json: unknown; password: string; crypto: CryptoBackend }): Uint8Array {
  const parsed = keystoreSchema.safeParse(args.json);
  if (!parsed.success) throw new KeystoreError('not a version 3 keystore with aes-128-ctr and scrypt or pbkdf2');
  const c = parsed.data.crypto;
  const derived = deriveKey(c.kdfparams, args.password);
  const ciphertext = fromHex(c.ciphertext);
  const mac = args.crypto.keccak256(Buffer.concat([derived.subarray(16, 32), ciphertext]));
  const expected = fromHex(c.mac);
  if (expected.length !== mac.length || !timingSafeEqual(Buffer.from(mac), expected)) {
    throw new KeystoreError('wrong keystore password (MAC mismatch)');
  }
  const decipher = createDecipheriv('aes-128-ctr', derived.subarray(0, 16), fromHex(c.cipherparams.iv));
  const key = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  if (key.length !== 32) throw new KeystoreError('keystore does not hold a 32-byte private key');
  return new Uint8Array(key);
}

/** Encrypts a key (scrypt N = 2^17 by default, like geth's "light" setting is 2^12 and its standard 2^18). */
export function encryptKeystore(args: {
  privateKey: Uint8Array;
  password: string;
  address: string;
  crypto: CryptoBackend;
  scryptN?: number;
}): Keystore & { id: string; address: string } {
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const kdfparams = { n: args.scryptN ?? 2 ** 17, r: 8, p: 1, dklen: 32, salt: salt.toString('hex') };
  const derived = deriveKey(kdfparams, args.password);
  const cipher = createCipheriv('aes-128-ctr', derived.subarray(0, 16), iv);
  const ciphertext = Buffer.concat([cipher.update(args.privateKey), cipher.final()]);
  const mac = Buffer.from(args.crypto.keccak256(Buffer.concat([derived.subarray(16, 32), ciphertext])));
  return {
    version: 3,
    id: randomUUID(),
    address: args.address.replace(/^0x/, '').toLowerCase(),
    crypto: {
      cipher: 'aes-128-ctr',
      ciphertext: ciphertext.toString('hex'),
      cipherparams: { iv: iv.toString('hex') },
      kdf: 'scrypt',
      kdfparams,
      mac: mac.toString('hex'),
    },
  };
}
