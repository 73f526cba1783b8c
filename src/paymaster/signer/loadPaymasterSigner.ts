import type { SignerSetting } from '../../config/signerSettings.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import { openKmsSigner } from './kmsSigner.js';
import { createPaymasterSigner, loadSignerKey, type PaymasterSigner } from './paymasterSigner.js';
import { openPkcs11Signer, type Pkcs11SignerLog } from './pkcs11Signer.js';

/** The configured paymaster signer: a key in the process, on a PKCS#11 token, or in AWS KMS. */
export async function loadPaymasterSigner(args: {
  readonly setting: SignerSetting;
  readonly crypto: CryptoBackend;
  /** A fixed key (tests), instead of the setting. */
  readonly privateKey?: Uint8Array | undefined;
  /** Where a device signer says it lost its device and got it back (pkcs11Signer.ts); the CLI gives none. */
  readonly logger?: Pkcs11SignerLog | undefined;
}): Promise<PaymasterSigner> {
  const { setting, crypto } = args;
  if (args.privateKey !== undefined) return createPaymasterSigner({ privateKey: args.privateKey, crypto });
  switch (setting.kind) {
    case 'pkcs11':
      return openPkcs11Signer({ setting, crypto, logger: args.logger });
    case 'kms':
      return openKmsSigner({ setting, crypto });
    default:
      return createPaymasterSigner({ privateKey: loadSignerKey(setting, crypto), crypto });
  }
}
