import fs from 'node:fs';
import { bytesToHex, type Hex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { selectCryptoBackend } from '../crypto/cryptoBackend.js';
import { ValidationError } from '../errors/PatronError.js';
import { decryptKeystore, KeystoreError } from '../paymaster/signer/keystore.js';
import { openKmsSigner } from '../paymaster/signer/kmsSigner.js';
import { openPkcs11Signer } from '../paymaster/signer/pkcs11Signer.js';
import { signerAccount } from '../paymaster/signer/signerAccount.js';
import { option } from './cliOptions.js';
import type { ChainCommandContext } from './commands.js';
import { configuredSigner } from './configuredSigner.js';

/**
 * Where the key that signs the CLI's transactions (deploy, deposit, the owner's operations) comes from. Each
 * source yields a viem account that signs transactions: a key here (environment, keystore), or one on a PKCS#11
 * token or in AWS KMS through the paymaster signer's back ends (signerAccount.ts: `toAccount`), the commands the same.
 */
export interface TransactionKeySource {
  /** How messages name it: "PATRON_DEPLOYER_PRIVATE_KEY" or "keystore ./owner.json". */
  readonly description: string;
  load(): Promise<LocalAccount>;
}

const KEY_HEX = /^(0x)?[0-9a-fA-F]{64}$/;

export const MISSING_KEY_MESSAGE =
  'PATRON_DEPLOYER_PRIVATE_KEY (a funded key, 64 hex characters), --keystore FILE (password in PATRON_KEYSTORE_PASSWORD), --pkcs11-key LABEL or --kms-key KEY_ID is required';

function privateKeySource(hex: string): TransactionKeySource {
  return {
    description: 'PATRON_DEPLOYER_PRIVATE_KEY',
    async load() {
      if (!KEY_HEX.test(hex)) throw new ValidationError('PATRON_DEPLOYER_PRIVATE_KEY must be 64 hex characters');
      return privateKeyToAccount(`0x${hex.replace(/^0x/, '')}` as Hex);
    },
  };
}

/** A Web3 Secret Storage (v3) file, the format `patron signer keystore`, geth and `cast wallet` write. */
function keystoreSource(file: string, password: string | undefined): TransactionKeySource {
  const description = `keystore ${file}`;
  return {
    description,
    async load() {
      if (password === undefined || password === '')
        throw new ValidationError(`PATRON_KEYSTORE_PASSWORD (the password of ${file}) is required with --keystore`);
      let json: unknown;
      try {
        json = JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch (err) {
        throw new ValidationError(`cannot read ${description}: ${err instanceof Error ? err.message : String(err)}`);
      }
      try {
        const key = decryptKeystore({ json, password, crypto: selectCryptoBackend().backend });
        return privateKeyToAccount(bytesToHex(key));
      } catch (err) {
        if (err instanceof KeystoreError) throw new ValidationError(`${description}: ${err.message}`);
        throw err;
      }
    },
  };
}

/**
 * A key labelled LABEL on the token the paymaster signer is configured with (PATRON_SIGNER_PKCS11_*): the owner's key
 * beside the signer's, a different key on the same device (`patron signer pkcs11-generate` with another
 * PATRON_SIGNER_PKCS11_KEY_LABEL makes it).
 */
function pkcs11Source(ctx: ChainCommandContext, keyLabel: string): TransactionKeySource {
  return {
    description: `PKCS#11 key "${keyLabel}"`,
    async load() {
      // Only the token's settings are used: a signer elsewhere (or the dev key file) is no token, whatever its state.
      const setting = 'setting' in ctx.signer ? ctx.signer.setting : configuredSigner(ctx, '--pkcs11-key');
      if (setting.kind !== 'pkcs11') {
        throw new ValidationError(
          '--pkcs11-key needs the token: PATRON_SIGNER_PKCS11_MODULE, PATRON_SIGNER_PKCS11_TOKEN_LABEL and PATRON_SIGNER_PKCS11_PIN',
        );
      }
      const crypto = selectCryptoBackend().backend;
      return signerAccount(openPkcs11Signer({ setting: { ...setting, keyLabel, sessions: 1 }, crypto }));
    },
  };
}

/** An AWS KMS key (ECC_SECG_P256K1); region and endpoint as the signer's when it is on KMS, else the SDK's. */
function kmsSource(ctx: ChainCommandContext, keyId: string): TransactionKeySource {
  return {
    description: `KMS key ${keyId}`,
    async load() {
      // The signer's settings only lend their region and endpoint: a signer that is not set (or is not KMS) is no fault.
      const signer = 'setting' in ctx.signer ? ctx.signer.setting : undefined;
      const at = signer?.kind === 'kms' ? signer : { region: undefined, endpoint: undefined };
      const setting = { kind: 'kms', keyId, region: at.region, endpoint: at.endpoint } as const;
      return signerAccount(await openKmsSigner({ setting, crypto: selectCryptoBackend().backend }));
    },
  };
}

/**
 * The key the command was given: `--keystore FILE` (its password from PATRON_KEYSTORE_PASSWORD, never a flag,
 * which `ps` and shell history would show), `--pkcs11-key LABEL`, `--kms-key KEY_ID` or PATRON_DEPLOYER_PRIVATE_KEY;
 * undefined when none is set.
 */
export function transactionKeySource(ctx: ChainCommandContext): TransactionKeySource | undefined {
  const file = option(ctx, 'keystore');
  const pkcs11Label = option(ctx, 'pkcs11-key');
  const kmsKey = option(ctx, 'kms-key');
  const hex = ctx.env.PATRON_DEPLOYER_PRIVATE_KEY ?? '';
  const given = [file, pkcs11Label, kmsKey, hex === '' ? undefined : hex].filter((v) => v !== undefined);
  if (given.length > 1) {
    throw new ValidationError(
      'give one key: --keystore, --pkcs11-key, --kms-key or PATRON_DEPLOYER_PRIVATE_KEY, not several',
    );
  }
  if (file !== undefined) return keystoreSource(file, ctx.env.PATRON_KEYSTORE_PASSWORD);
  if (pkcs11Label !== undefined) return pkcs11Source(ctx, pkcs11Label);
  if (kmsKey !== undefined) return kmsSource(ctx, kmsKey);
  return hex === '' ? undefined : privateKeySource(hex);
}

export async function requireTransactionKey(ctx: ChainCommandContext): Promise<LocalAccount> {
  const source = transactionKeySource(ctx);
  if (source === undefined) throw new ValidationError(MISSING_KEY_MESSAGE);
  return source.load();
}
