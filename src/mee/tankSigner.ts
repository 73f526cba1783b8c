import fs from 'node:fs';
import type { Address, Hex } from 'viem';
import type { KmsSignerSetting, Pkcs11SignerSetting } from '../config/signerSettings.js';
import { type TankSignerRef, tankSignerRefSchema } from '../config/tankSignerRef.js';
import type { CryptoBackend } from '../crypto/cryptoBackend.js';
import { KeystoreError } from '../paymaster/signer/keystore.js';
import { openKmsSigner } from '../paymaster/signer/kmsSigner.js';
import { createPaymasterSigner, type PaymasterSigner, readKeystoreFile } from '../paymaster/signer/paymasterSigner.js';
import { openPkcs11Signer, type Pkcs11SignerLog } from '../paymaster/signer/pkcs11Signer.js';
import { signerAccount } from '../paymaster/signer/signerAccount.js';

// The ref's schema stands on the ground floor (config/), beside the paymaster signer's settings, so that the tanks'
// repository (store/, below this room) parses its JSON column with it; re-exported here, where the contract names it.
export { type TankSignerRef, tankSignerRefSchema } from '../config/tankSignerRef.js';

/** A gas tank's owner key, opened. */
export interface TankSigner {
  readonly address: Address;
  /**
   * The EIP-191 personal_sign signature (65 bytes, r ‖ s ‖ v, s low, v 27 or 28) over the raw 32 bytes of `root`:
   * exactly viem's `signMessage({ message: { raw: root } })`, what the tank's K1 MEE validator checks (the MEE note).
   */
  signRoot(root: Hex): Promise<Hex>;
}

export interface TankSigners {
  /** The ref's signer, opened once per distinct ref and kept until close; a failed open is retried by the next call. */
  signerFor(ref: TankSignerRef): Promise<TankSigner>;
  /** Closes every opened back end (sessions, clients); later calls are refused. */
  close(): Promise<void>;
}

const ROOT = /^0x[0-9a-fA-F]{64}$/;

export class TankSignerError extends Error {
  override readonly name = 'TankSignerError';
}

function readSecret(secret: { readonly file: string }, what: string): string {
  try {
    return fs.readFileSync(secret.file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new TankSignerError(`cannot read the ${what} file ${secret.file}: ${(err as Error).message}`);
  }
}

/** The ref's back end, opened by the paymaster signer's own code (no second implementation of any of them). */
async function openBackEnd(args: {
  readonly ref: TankSignerRef;
  readonly crypto: CryptoBackend;
  readonly logger: Pkcs11SignerLog | undefined;
}): Promise<PaymasterSigner> {
  const { ref, crypto } = args;
  switch (ref.kind) {
    case 'keystore': {
      const password = readSecret(ref.password, 'keystore password');
      try {
        return createPaymasterSigner({ privateKey: readKeystoreFile({ file: ref.path, password, crypto }), crypto });
      } catch (err) {
        if (!(err instanceof KeystoreError)) throw err;
        throw new TankSignerError(`the tank keystore ${ref.path}: ${err.message}`, { cause: err });
      }
    }
    case 'pkcs11': {
      const setting: Pkcs11SignerSetting = {
        kind: 'pkcs11',
        module: ref.module,
        tokenLabel: ref.tokenLabel,
        pin: ref.pin,
        keyLabel: ref.keyLabel,
        sessions: ref.sessions ?? 1,
      };
      return openPkcs11Signer({ setting, crypto, logger: args.logger });
    }
    case 'kms': {
      const setting: KmsSignerSetting = { kind: 'kms', keyId: ref.keyId, region: ref.region, endpoint: ref.endpoint };
      return openKmsSigner({ setting, crypto });
    }
  }
}

/** One key per distinct ref, whatever order its fields came in (a ref read back from JSON may be reordered). */
function refKey(ref: TankSignerRef): string {
  const sorted = (value: unknown): unknown =>
    value !== null && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([, v]) => v !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, v]) => [k, sorted(v)]),
        )
      : value;
  return JSON.stringify(sorted(ref));
}

export function createTankSigners(deps: {
  readonly crypto: CryptoBackend;
  /** Where a PKCS#11 token's loss and reopening are logged (pkcs11Signer.ts). */
  readonly logger?: Pkcs11SignerLog | undefined;
}): TankSigners {
  const opened = new Map<string, Promise<PaymasterSigner>>();
  let closed = false;
  return {
    async signerFor(ref) {
      if (closed) throw new TankSignerError('the tank signers are closed');
      const parsed = tankSignerRefSchema.parse(ref);
      const key = refKey(parsed);
      let backEnd = opened.get(key);
      if (backEnd === undefined) {
        backEnd = openBackEnd({ ref: parsed, crypto: deps.crypto, logger: deps.logger });
        opened.set(key, backEnd);
        // A key that could not be opened (a token down, a file not yet mounted) is tried afresh next time.
        backEnd.catch(() => opened.delete(key));
      }
      const signer = await backEnd;
      // signerAccount hashes as viem's local accounts do (hashMessage of the raw bytes) and signs the digest on the
      // back end, whose signature is already r ‖ s ‖ v with s low (ecdsaSignature.ts).
      const account = signerAccount(signer);
      return {
        address: signer.address,
        async signRoot(root) {
          // The root and nothing else: any other length would be a message the validator never checks.
          if (!ROOT.test(root)) throw new TankSignerError('a tank signs a 32-byte Merkle root (0x and 64 hex digits)');
          return account.signMessage({ message: { raw: root } });
        },
      };
    },
    async close() {
      closed = true;
      const all = [...opened.values()];
      opened.clear();
      const signers = await Promise.allSettled(all);
      const closes = signers.flatMap((s) => (s.status === 'fulfilled' ? [s.value.close()] : []));
      await Promise.all(closes);
    },
  };
}
