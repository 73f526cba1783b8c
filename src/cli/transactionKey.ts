import fs from 'node:fs';
import { bytesToHex, type Hex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { selectCryptoBackend } from '../crypto/cryptoBackend.js';
import { ValidationError } from '../errors/PatronError.js';
import { decryptKeystore, KeystoreError } from '../paymaster/signer/keystore.js';
import { option } from './cliOptions.js';
import type { CommandContext } from './commands.js';

/**
 * Where the key that signs the CLI's transactions (deploy, deposit, the owner's operations) comes from. Each
 * source yields a viem account that signs transactions; a hardware (PKCS#11) or cloud (KMS) key would be one
 * more implementation returning `toAccount({ address, signTransaction, … })`, the commands stay as they are.
 */
export interface TransactionKeySource {
  /** How messages name it: "PATRON_DEPLOYER_PRIVATE_KEY" or "keystore ./owner.json". */
  readonly description: string;
  load(): Promise<LocalAccount>;
}

const KEY_HEX = /^(0x)?[0-9a-fA-F]{64}$/;

export const MISSING_KEY_MESSAGE =
  'PATRON_DEPLOYER_PRIVATE_KEY (a funded key, 64 hex characters) or --keystore FILE (password in PATRON_KEYSTORE_PASSWORD) is required';

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
 * The key the command was given: `--keystore FILE` (its password from PATRON_KEYSTORE_PASSWORD, never a flag,
 * which `ps` and shell history would show) or PATRON_DEPLOYER_PRIVATE_KEY; undefined when neither is set.
 */
export function transactionKeySource(ctx: CommandContext): TransactionKeySource | undefined {
  const file = option(ctx, 'keystore');
  const hex = ctx.env.PATRON_DEPLOYER_PRIVATE_KEY ?? '';
  if (file !== undefined && hex !== '')
    throw new ValidationError('give one key: --keystore or PATRON_DEPLOYER_PRIVATE_KEY, not both');
  if (file !== undefined) return keystoreSource(file, ctx.env.PATRON_KEYSTORE_PASSWORD);
  return hex === '' ? undefined : privateKeySource(hex);
}

export async function requireTransactionKey(ctx: CommandContext): Promise<LocalAccount> {
  const source = transactionKeySource(ctx);
  if (source === undefined) throw new ValidationError(MISSING_KEY_MESSAGE);
  return source.load();
}
