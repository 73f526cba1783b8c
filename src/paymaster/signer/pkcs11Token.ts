import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Address } from 'viem';
import type { Pkcs11SignerSetting } from '../../config/signerSettings.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import { PatronError, type PatronErrorOptions } from '../../errors/PatronError.js';
import { addressOfPublicKey, publicKeyFromEcPoint, SECP256K1_OID_DER } from './ecdsaSignature.js';

/**
 * A PKCS#11 token (an HSM; SoftHSM2 in tests) through `pkcs11js`: the library loaded, the token found by its label,
 * the user logged in, and the secp256k1 key pair found by its label or generated inside the token. The private key
 * is created sensitive and non-extractable: its bytes never leave the device, which only ever returns signatures.
 */
export type Pkcs11 = typeof import('pkcs11js');
type Lib = InstanceType<Pkcs11['PKCS11']>;
type Handle = Buffer;

export class Pkcs11SignerError extends Error {
  override readonly name = 'Pkcs11SignerError';
}

/**
 * The token is gone and could not be reopened yet (a restart under way, a device unplugged): transient, so the caller
 * gets a 503 to retry (-32603, the details in the log only), as for a chain that does not answer; the signer reopens
 * it at most once a second (pkcs11Signer.ts).
 */
export class Pkcs11TokenUnavailableError extends PatronError {
  override name = 'Pkcs11TokenUnavailableError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('UNAVAILABLE', message, options);
  }
}

export type TokenAccess = Pick<Pkcs11SignerSetting, 'module' | 'tokenLabel' | 'pin' | 'keyLabel'>;

export interface OpenToken {
  readonly pkcs11: Pkcs11;
  readonly lib: Lib;
  readonly slot: Handle;
  /** A logged-in session (the login holds for every session this process opens on the token). */
  readonly session: Handle;
  close(): void;
}

/** pkcs11js, loaded only when a PKCS#11 signer is configured (it is a native addon). */
function loadPkcs11(): Pkcs11 {
  try {
    return createRequire(import.meta.url)('pkcs11js') as Pkcs11;
  } catch (err) {
    throw new Pkcs11SignerError(
      `the pkcs11js addon did not load (${err instanceof Error ? err.message : String(err)}); run npm install where a C++ compiler is available`,
    );
  }
}

function pinOf(pin: TokenAccess['pin']): string {
  if ('value' in pin) return pin.value;
  try {
    return fs.readFileSync(pin.file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new Pkcs11SignerError(`cannot read PATRON_SIGNER_PKCS11_PIN_FILE ${pin.file}: ${(err as Error).message}`);
  }
}

const errorCode = (err: unknown): number | undefined =>
  typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number' ? err.code : undefined;

/** The return values that mean a token lost under a signer, by their names in pkcs11js (PKCS#11 v2.40 §5.1). */
const LOSS_CODES = [
  // the session is gone: the token was restarted, or every session was closed (C_CloseAllSessions)
  'CKR_SESSION_HANDLE_INVALID',
  'CKR_SESSION_CLOSED',
  // the device itself: unplugged, failed, or gone from its slot
  'CKR_DEVICE_REMOVED',
  'CKR_DEVICE_ERROR',
  'CKR_TOKEN_NOT_PRESENT',
  'CKR_TOKEN_NOT_RECOGNIZED',
  // the module was finalised under the signer (a library that restarts its connection to a network HSM does so)
  'CKR_CRYPTOKI_NOT_INITIALIZED',
  // a restarted token forgets the login, and may number its objects anew
  'CKR_USER_NOT_LOGGED_IN',
  'CKR_KEY_HANDLE_INVALID',
  'CKR_OBJECT_HANDLE_INVALID',
] as const satisfies readonly (keyof Pkcs11)[];

/**
 * The name of the loss when `err` says the token's session or module is gone (reopening it may cure it), else
 * undefined (a refusal of this signature alone: reopening would not change it).
 */
export function tokenLoss(pkcs11: Pkcs11, err: unknown): string | undefined {
  const code = errorCode(err);
  return code === undefined ? undefined : LOSS_CODES.find((name) => pkcs11[name] === code);
}

/** Loads the module, finds the token by label and logs in as its user. */
export function openToken(access: TokenAccess): OpenToken {
  const pkcs11 = loadPkcs11();
  const lib = new pkcs11.PKCS11();
  try {
    lib.load(access.module);
  } catch (err) {
    throw new Pkcs11SignerError(`cannot load PATRON_SIGNER_PKCS11_MODULE ${access.module}: ${(err as Error).message}`);
  }
  // The library is process-wide: another signer in this process (a test, the benchmark) may have initialised it.
  let initialised = true;
  try {
    // Signatures run on libuv's thread pool (C_SignAsync), several at once: the library must lock (PKCS#11 §5.4;
    // without the flag it may assume one thread, and SoftHSM2 then corrupts its heap).
    lib.C_Initialize({ flags: pkcs11.CKF_OS_LOCKING_OK });
  } catch (err) {
    if (errorCode(err) !== pkcs11.CKR_CRYPTOKI_ALREADY_INITIALIZED) throw err;
    initialised = false;
  }
  // Never throws: it releases what is left, and after a token restart the module may already be finalised under it
  // (CKR_CRYPTOKI_NOT_INITIALIZED), which leaves nothing to release but the library handle.
  const finalize = () => {
    try {
      if (initialised) lib.C_Finalize();
    } catch {
      // already finalised by the restart: nothing left to finalise
    }
    lib.close();
  };
  try {
    const slot = lib
      .C_GetSlotList(true)
      .find((s) => lib.C_GetTokenInfo(s).label.trimEnd() === access.tokenLabel.trimEnd());
    if (slot === undefined) {
      throw new Pkcs11SignerError(
        `no PKCS#11 token labelled "${access.tokenLabel}" in ${access.module} (check PATRON_SIGNER_PKCS11_TOKEN_LABEL)`,
      );
    }
    const session = lib.C_OpenSession(slot, pkcs11.CKF_SERIAL_SESSION | pkcs11.CKF_RW_SESSION);
    try {
      lib.C_Login(session, pkcs11.CKU_USER, pinOf(access.pin));
    } catch (err) {
      const code = errorCode(err);
      if (code === pkcs11.CKR_PIN_INCORRECT) throw new Pkcs11SignerError(`wrong PIN for token "${access.tokenLabel}"`);
      if (code !== pkcs11.CKR_USER_ALREADY_LOGGED_IN) throw err;
    }
    return { pkcs11, lib, slot, session, close: finalize };
  } catch (err) {
    finalize();
    throw err;
  }
}

function findObjects(token: OpenToken, template: Parameters<Lib['C_FindObjectsInit']>[1]): Handle[] {
  const { lib, session } = token;
  lib.C_FindObjectsInit(session, template);
  try {
    return lib.C_FindObjects(session, 16);
  } finally {
    lib.C_FindObjectsFinal(session);
  }
}

export interface TokenKey {
  readonly privateKey: Handle;
  /** 0x04 ‖ x ‖ y */
  readonly publicKey: Uint8Array;
  readonly address: Address;
}

/** The key pair labelled `keyLabel`: one EC private key, its public half on secp256k1. */
export function findKey(token: OpenToken, args: { keyLabel: string; crypto: CryptoBackend }): TokenKey | undefined {
  const { pkcs11, lib, session } = token;
  const label = { type: pkcs11.CKA_LABEL, value: args.keyLabel };
  const privateKeys = findObjects(token, [{ type: pkcs11.CKA_CLASS, value: pkcs11.CKO_PRIVATE_KEY }, label]);
  const publicKeys = findObjects(token, [{ type: pkcs11.CKA_CLASS, value: pkcs11.CKO_PUBLIC_KEY }, label]);
  if (privateKeys.length === 0) return undefined;
  const [privateKey] = privateKeys;
  const [publicKeyObject] = publicKeys;
  if (privateKeys.length > 1 || publicKeys.length !== 1 || privateKey === undefined || publicKeyObject === undefined) {
    throw new Pkcs11SignerError(
      `the token holds ${privateKeys.length} private and ${publicKeys.length} public keys labelled "${args.keyLabel}": expected one pair`,
    );
  }
  const [params, point] = lib.C_GetAttributeValue(session, publicKeyObject, [
    { type: pkcs11.CKA_EC_PARAMS },
    { type: pkcs11.CKA_EC_POINT },
  ]);
  if (params?.value === undefined || !Buffer.from(SECP256K1_OID_DER).equals(params.value)) {
    throw new Pkcs11SignerError(`the key "${args.keyLabel}" is not on secp256k1`);
  }
  if (point?.value === undefined) throw new Pkcs11SignerError(`the key "${args.keyLabel}" has no CKA_EC_POINT`);
  const publicKey = publicKeyFromEcPoint(point.value);
  return { privateKey, publicKey, address: addressOfPublicKey(publicKey, args.crypto) };
}

/**
 * Generates a secp256k1 key pair inside the token (CKM_EC_KEY_PAIR_GEN): the private key a token object, private,
 * sensitive and never extractable, usable only to sign. Refuses a label already taken (a second key under one label
 * would make the signer ambiguous).
 */
export function generateKey(token: OpenToken, args: { keyLabel: string; crypto: CryptoBackend }): TokenKey {
  if (findKey(token, args) !== undefined) {
    throw new Pkcs11SignerError(`the token already holds a key labelled "${args.keyLabel}"; choose another label`);
  }
  const { pkcs11, lib, session } = token;
  const common = [
    { type: pkcs11.CKA_TOKEN, value: true },
    { type: pkcs11.CKA_LABEL, value: args.keyLabel },
  ];
  lib.C_GenerateKeyPair(
    session,
    { mechanism: pkcs11.CKM_EC_KEY_PAIR_GEN },
    [
      ...common,
      { type: pkcs11.CKA_EC_PARAMS, value: Buffer.from(SECP256K1_OID_DER) },
      { type: pkcs11.CKA_VERIFY, value: true },
    ],
    [
      ...common,
      { type: pkcs11.CKA_PRIVATE, value: true },
      { type: pkcs11.CKA_SENSITIVE, value: true },
      { type: pkcs11.CKA_EXTRACTABLE, value: false },
      { type: pkcs11.CKA_SIGN, value: true },
    ],
  );
  const key = findKey(token, args);
  if (key === undefined) throw new Pkcs11SignerError('the token did not keep the generated key');
  return key;
}
