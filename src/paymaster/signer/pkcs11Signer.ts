import type { Pkcs11SignerSetting } from '../../config/signerSettings.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import { ethereumSignature, rsFromRaw } from './ecdsaSignature.js';
import { type PaymasterSigner, redacted } from './paymasterSigner.js';
import { findKey, openToken, Pkcs11SignerError } from './pkcs11Token.js';

/**
 * The paymaster signer on a PKCS#11 token. CKM_ECDSA signs the 32-byte digest as given (no hashing by the token)
 * and returns r ‖ s; s is made low and v found by recovery (ecdsaSignature.ts). A PKCS#11 session runs one
 * operation at a time, so the signer keeps a few sessions and signs on whichever is free; the token's own call runs
 * on libuv's thread pool (C_SignAsync), so a slow HSM never blocks the event loop.
 */
export function openPkcs11Signer(args: { setting: Pkcs11SignerSetting; crypto: CryptoBackend }): PaymasterSigner {
  const { setting, crypto } = args;
  const token = openToken(setting);
  try {
    const key = findKey(token, { keyLabel: setting.keyLabel, crypto });
    if (key === undefined) {
      throw new Pkcs11SignerError(
        `no key labelled "${setting.keyLabel}" on token "${setting.tokenLabel}": generate one with \`patron signer pkcs11-generate\``,
      );
    }
    const { pkcs11, lib } = token;
    const free = [token.session];
    for (let i = 1; i < setting.sessions; i++) free.push(lib.C_OpenSession(token.slot, pkcs11.CKF_SERIAL_SESSION));
    const waiting: ((session: Buffer) => void)[] = [];
    const acquire = (): Buffer | Promise<Buffer> =>
      free.pop() ?? new Promise<Buffer>((resolve) => waiting.push(resolve));
    const release = (session: Buffer) => {
      const next = waiting.shift();
      if (next === undefined) free.push(session);
      else next(session);
    };
    const mechanism = { mechanism: pkcs11.CKM_ECDSA };
    let closed = false;
    const sign = async (digest: Uint8Array): Promise<Uint8Array> => {
      if (closed) throw new Pkcs11SignerError('the PKCS#11 signer is closed');
      const session = await acquire();
      try {
        lib.C_SignInit(session, mechanism, key.privateKey);
        const raw = await lib.C_SignAsync(session, Buffer.from(digest), Buffer.alloc(72));
        return ethereumSignature({ digest, ...rsFromRaw(raw), publicKey: key.publicKey, crypto });
      } finally {
        release(session);
      }
    };
    return redacted({
      address: key.address,
      backend: 'pkcs11',
      sign,
      async close() {
        if (closed) return;
        closed = true;
        token.close();
      },
    });
  } catch (err) {
    token.close();
    throw err;
  }
}
