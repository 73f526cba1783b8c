import type { Pkcs11SignerSetting } from '../../config/signerSettings.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import { ethereumSignature, rsFromRaw } from './ecdsaSignature.js';
import { type PaymasterSigner, redacted } from './paymasterSigner.js';
import { openPkcs11Connection, type Pkcs11Connection, RetiredConnectionError } from './pkcs11Connection.js';
import { Pkcs11SignerError, Pkcs11TokenUnavailableError, tokenLoss } from './pkcs11Token.js';

/**
 * At most one attempt to reopen a lost token per this many ms: a token that stays gone costs each signature one
 * immediate refusal, not a C_Initialize and a login each (which a network HSM's library may take seconds over).
 */
export const PKCS11_REOPEN_EVERY_MS = 1_000;
/**
 * How long a reopen waits for the signatures still running on the lost opening before it finalises the module
 * (finalising under a running call is undefined behaviour in PKCS#11). A device that never answers them is left as
 * it is, its opening abandoned, and the new one made beside it.
 */
const DRAIN_MS = 5_000;

export interface Pkcs11SignerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

const silent: Pkcs11SignerLog = { info: () => undefined, warn: () => undefined };
const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The paymaster signer on a PKCS#11 token. CKM_ECDSA signs the 32-byte digest as given (no hashing by the token)
 * and returns r ‖ s; s is made low and v found by recovery (ecdsaSignature.ts). The token's own call runs on libuv's
 * thread pool (C_SignAsync), so a slow HSM never blocks the event loop.
 *
 * A token that restarts (a power cycle, an HA fail-over, a network HSM's reconnect) invalidates every session and
 * login of the process, and without more every signature would fail until Patron restarted. A signature that meets
 * such a loss (tokenLoss: CKR_SESSION_HANDLE_INVALID, CKR_DEVICE_REMOVED, CKR_CRYPTOKI_NOT_INITIALIZED, …) retires
 * the opening, has the token reopened as at start (tokenOpenings below) and is retried once on the new opening.
 * docs/guides/signer-backends.md, "When the token restarts".
 */
export function openPkcs11Signer(args: {
  setting: Pkcs11SignerSetting;
  crypto: CryptoBackend;
  /** One line per loss, per failed reopen (when its reason changes) and per recovery; never the PIN. */
  logger?: Pkcs11SignerLog | undefined;
  /** The clock spacing reopen attempts (tests move it). */
  now?: (() => number) | undefined;
}): PaymasterSigner {
  const { setting, crypto } = args;
  const first = openPkcs11Connection({ setting, crypto });
  const { address, publicKey } = first.key;
  const openings = tokenOpenings({ ...args, first, logger: args.logger ?? silent, now: args.now ?? Date.now });

  /** One try on the current opening: its signature, or the loss that retired it (any other refusal is thrown). */
  const tryOnce = async (digest: Uint8Array): Promise<Uint8Array | { readonly lost: unknown }> => {
    const conn = await openings.current();
    try {
      const raw = await conn.signRaw(digest);
      return ethereumSignature({ digest, ...rsFromRaw(raw), publicKey, crypto });
    } catch (err) {
      const loss = err instanceof RetiredConnectionError ? 'retired' : tokenLoss(conn.token.pkcs11, err);
      if (loss === undefined || openings.closed()) throw err;
      openings.lose(conn, loss);
      return { lost: err };
    }
  };

  return redacted({
    address,
    backend: 'pkcs11',
    async sign(digest) {
      if (openings.closed()) throw new Pkcs11SignerError('the PKCS#11 signer is closed');
      const once = await tryOnce(digest);
      if (once instanceof Uint8Array) return once;
      // Once: a loss again on the reopened token is the device's state, which the next signature finds out anew.
      const again = await tryOnce(digest);
      if (again instanceof Uint8Array) return again;
      throw new Pkcs11TokenUnavailableError(
        `the PKCS#11 token "${setting.tokenLabel}" was lost again right after it was reopened (${reasonOf(again.lost)})`,
        { cause: again.lost },
      );
    },
    close: () => openings.close(),
  });
}

/**
 * The signer's openings of its token, one current at a time. A lost one is retired; the next caller reopens the
 * token as at start (module, token label, login, key label) and requires the same address (a token re-initialised
 * with another key under the label is refused: the paymasters accept the signer's address, not the label). Callers
 * during a reopen share it (single flight); attempts are spaced by PKCS11_REOPEN_EVERY_MS, and between them a caller
 * is refused at once with the last failure (Pkcs11TokenUnavailableError: -32603 with HTTP 503 on the wire, transient,
 * the details in the log).
 */
function tokenOpenings(args: {
  setting: Pkcs11SignerSetting;
  crypto: CryptoBackend;
  first: Pkcs11Connection;
  logger: Pkcs11SignerLog;
  now: () => number;
}) {
  const { setting, crypto, logger, now } = args;
  const { address } = args.first.key;
  const fields = { backend: 'pkcs11', token: setting.tokenLabel, keyLabel: setting.keyLabel };
  let current: Pkcs11Connection | undefined = args.first;
  /** A lost opening not yet closed: the next reopen drains and closes it before it initialises the module again. */
  let leftover: Pkcs11Connection | undefined;
  let reopening: Promise<Pkcs11Connection> | undefined;
  let lastAttemptAt = Number.NEGATIVE_INFINITY;
  let lastFailure: string | undefined;
  let closed = false;

  const reopenNow = async (): Promise<Pkcs11Connection> => {
    const old = leftover;
    leftover = undefined;
    if (old !== undefined) {
      if (await old.drained(DRAIN_MS)) old.close();
      else logger.warn(fields, 'PKCS#11 token lost: signatures on it still running; its opening is abandoned');
    }
    const started = now();
    const conn = openPkcs11Connection({ setting, crypto });
    if (conn.key.address !== address || closed) {
      conn.close();
      throw new Pkcs11SignerError(
        closed
          ? 'the PKCS#11 signer is closed'
          : `the key labelled "${setting.keyLabel}" on token "${setting.tokenLabel}" is now ${conn.key.address}, not the signer ${address}: restart Patron to sign with it`,
      );
    }
    current = conn;
    lastFailure = undefined;
    logger.info({ ...fields, ms: now() - started }, 'PKCS#11 token reopened: signing resumed');
    return conn;
  };

  const reopen = (): Promise<Pkcs11Connection> => {
    lastAttemptAt = now();
    const attempt = reopenNow().catch((err: unknown) => {
      const reason = reasonOf(err);
      if (reason !== lastFailure) logger.warn({ ...fields, reason }, 'PKCS#11 token lost: reopening it failed');
      lastFailure = reason;
      throw new Pkcs11TokenUnavailableError(`the PKCS#11 token "${setting.tokenLabel}" is unavailable (${reason})`, {
        cause: err,
      });
    });
    const shared = attempt.finally(() => {
      reopening = undefined;
    });
    // Every caller awaits `shared`; this handler only keeps a reopen no caller awaits any more from going unhandled.
    shared.catch(() => undefined);
    reopening = shared;
    return shared;
  };

  return {
    closed: () => closed,
    /** The current opening, or the one reopen every caller shares; refused while the last attempt is recent. */
    current(): Pkcs11Connection | Promise<Pkcs11Connection> {
      if (current !== undefined) return current;
      if (reopening !== undefined) return reopening;
      const wait = lastAttemptAt + PKCS11_REOPEN_EVERY_MS - now();
      if (wait <= 0) return reopen();
      throw new Pkcs11TokenUnavailableError(
        `the PKCS#11 token "${setting.tokenLabel}" is unavailable (${lastFailure ?? 'lost'}); the next attempt to reopen it is in ${wait} ms`,
      );
    },
    lose(conn: Pkcs11Connection, loss: string) {
      // Only the current opening's loss is news: the signatures that were running on it report the same loss later.
      if (current !== conn) return;
      current = undefined;
      leftover = conn;
      conn.retire();
      logger.warn({ ...fields, loss }, 'PKCS#11 token lost: reopening it');
    },
    async close() {
      if (closed) return;
      closed = true;
      await reopening?.catch(() => undefined);
      for (const conn of [current, leftover]) {
        if (conn === undefined) continue;
        conn.retire();
        if (await conn.drained(DRAIN_MS)) conn.close();
      }
      current = undefined;
      leftover = undefined;
    },
  };
}
