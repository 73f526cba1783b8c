import type { Pkcs11SignerSetting } from '../../config/signerSettings.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import { findKey, type OpenToken, openToken, Pkcs11SignerError, type TokenKey } from './pkcs11Token.js';

/**
 * One opening of the signer's token: the module loaded and initialised, the user logged in, the key found, and a few
 * sessions to sign on (a PKCS#11 session runs one operation at a time, so signatures take whichever is free and the
 * rest wait). A token restart loses all of it at once; pkcs11Signer.ts then retires this opening and makes another.
 */
export interface Pkcs11Connection {
  readonly token: OpenToken;
  readonly key: TokenKey;
  /** r ‖ s from the token (CKM_ECDSA over the digest as given); the token's own error when it refuses. */
  signRaw(digest: Uint8Array): Promise<Buffer>;
  /**
   * No new signature starts here: those waiting for a session are refused at once (with RetiredConnectionError) so
   * that they move to the next opening instead of waiting for sessions of a dead one.
   */
  retire(): void;
  /** Whether the signatures running on the token settled within `ms` (so that closing cannot pull the module from under one). */
  drained(ms: number): Promise<boolean>;
  /** Closes the sessions and finalises the module; never throws (after a restart there may be nothing left). */
  close(): void;
}

/** A signature that waited for a session of an opening retired meanwhile: it was never sent to the token. */
export class RetiredConnectionError extends Error {
  override readonly name = 'RetiredConnectionError';
}

export function openPkcs11Connection(args: { setting: Pkcs11SignerSetting; crypto: CryptoBackend }): Pkcs11Connection {
  const { setting } = args;
  const token = openToken(setting);
  try {
    const key = findKey(token, { keyLabel: setting.keyLabel, crypto: args.crypto });
    if (key === undefined) {
      throw new Pkcs11SignerError(
        `no key labelled "${setting.keyLabel}" on token "${setting.tokenLabel}": generate one with \`patron signer pkcs11-generate\``,
      );
    }
    const { pkcs11, lib } = token;
    const sessions = [token.session];
    for (let i = 1; i < setting.sessions; i++) sessions.push(lib.C_OpenSession(token.slot, pkcs11.CKF_SERIAL_SESSION));
    return sessionPool({ token, key, sessions });
  } catch (err) {
    token.close();
    throw err;
  }
}

function sessionPool(args: { token: OpenToken; key: TokenKey; sessions: Buffer[] }): Pkcs11Connection {
  const { token, key } = args;
  const { pkcs11, lib } = token;
  const free = [...args.sessions];
  const waiting: { resolve(session: Buffer): void; reject(err: Error): void }[] = [];
  let retired = false;
  let running = 0;
  let onIdle: (() => void) | undefined;
  const acquire = (): Buffer | Promise<Buffer> => {
    if (retired) throw new RetiredConnectionError('the PKCS#11 session was lost');
    return free.pop() ?? new Promise<Buffer>((resolve, reject) => waiting.push({ resolve, reject }));
  };
  const release = (session: Buffer) => {
    const next = waiting.shift();
    if (next === undefined) free.push(session);
    else next.resolve(session);
  };
  const mechanism = { mechanism: pkcs11.CKM_ECDSA };
  return {
    token,
    key,
    async signRaw(digest) {
      const session = await acquire();
      running++;
      try {
        lib.C_SignInit(session, mechanism, key.privateKey);
        return await lib.C_SignAsync(session, Buffer.from(digest), Buffer.alloc(72));
      } finally {
        running--;
        if (running === 0) onIdle?.();
        release(session);
      }
    },
    retire() {
      retired = true;
      for (const w of waiting.splice(0)) w.reject(new RetiredConnectionError('the PKCS#11 session was lost'));
    },
    drained(ms) {
      if (running === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        onIdle = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
    },
    close() {
      for (const session of args.sessions) {
        try {
          lib.C_CloseSession(session);
        } catch {
          // a session the restart already closed
        }
      }
      token.close();
    },
  };
}
