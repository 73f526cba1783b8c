import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { bytesToHex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { selectCryptoBackend } from '../crypto/cryptoBackend.js';
import { ValidationError } from '../errors/PatronError.js';
import { encryptKeystore } from '../paymaster/signer/keystore.js';
import { loadPaymasterSigner } from '../paymaster/signer/loadPaymasterSigner.js';
import { loadSignerKey } from '../paymaster/signer/paymasterSigner.js';
import { generateKey, openToken } from '../paymaster/signer/pkcs11Token.js';
import { requireOption } from './cliOptions.js';
import { type CliIo, printResult } from './cliOutput.js';
import type { ChainCommandContext } from './commands.js';
import { configuredSigner } from './configuredSigner.js';

/**
 * The paymaster signer's key: its address, an encrypted keystore of a local key (or of a new one), and a key
 * generated inside a PKCS#11 token. No command writes a private key in clear: the keystore is the only file written,
 * encrypted under PATRON_KEYSTORE_PASSWORD (docs/guides/signer-backends.md, "Plain-text keys").
 */

function keystorePassword(env: ChainCommandContext['env']): string {
  const password = env.PATRON_KEYSTORE_PASSWORD ?? '';
  if (password.length < 8) throw new ValidationError('PATRON_KEYSTORE_PASSWORD (at least 8 characters) is required');
  return password;
}

/** Writes the keystore, owner-only, never over an existing file. */
function writeKeystore(args: { out: string; privateKey: Uint8Array; password: string }): string {
  const { backend } = selectCryptoBackend();
  const address = privateKeyToAddress(bytesToHex(args.privateKey));
  const keystore = encryptKeystore({ privateKey: args.privateKey, password: args.password, address, crypto: backend });
  try {
    fs.writeFileSync(args.out, `${JSON.stringify(keystore, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new ValidationError(`${args.out} exists: a key file is never overwritten`);
    throw new ValidationError(`cannot write ${args.out}: ${(err as Error).message}`);
  }
  return address;
}

/**
 * `patron signer keystore --generate --out FILE`: a new key, made in memory and written only encrypted. It needs
 * neither configuration nor database (it runs before either is opened, like `master-key generate`), so it works on
 * a production machine that has no signer yet.
 */
export function generateSignerKeystore(args: {
  io: CliIo;
  json: boolean;
  out: string | undefined;
  env: ChainCommandContext['env'];
}): void {
  if (args.out === undefined || args.out === '') throw new ValidationError('--out is required');
  const password = keystorePassword(args.env);
  const privateKey = randomBytes(32);
  const address = writeKeystore({ out: args.out, privateKey, password });
  privateKey.fill(0);
  printResult(args.io, args.json, { keystore: args.out, signer: address }, [
    `Wrote ${args.out} (new signer ${address}); use it with PATRON_SIGNER_KEYSTORE and PATRON_SIGNER_KEYSTORE_PASSWORD`,
  ]);
}

export const signerCommands: Record<string, (ctx: ChainCommandContext) => Promise<void>> = {
  async 'signer address'(ctx) {
    const setting = configuredSigner(ctx, 'signer address');
    const signer = await loadPaymasterSigner({ setting, crypto: selectCryptoBackend().backend });
    await signer.close();
    const source = setting.kind;
    printResult(ctx.io, ctx.json, { signer: signer.address, source }, [signer.address]);
  },

  async 'signer keystore'(ctx) {
    const out = requireOption(ctx, 'out');
    const setting = configuredSigner(ctx, 'signer keystore');
    if (setting.kind === 'pkcs11' || setting.kind === 'kms') {
      throw new ValidationError(
        `the signer's key is in ${setting.kind === 'kms' ? 'AWS KMS' : 'a PKCS#11 token'} and cannot be exported; use --generate for a new local key`,
      );
    }
    const password = keystorePassword(ctx.env);
    const privateKey = loadSignerKey(setting, selectCryptoBackend().backend);
    const address = writeKeystore({ out, privateKey, password });
    printResult(ctx.io, ctx.json, { keystore: out, signer: address }, [
      `Wrote ${out} (signer ${address}); use it with PATRON_SIGNER_KEYSTORE and PATRON_SIGNER_KEYSTORE_PASSWORD`,
    ]);
  },

  /** A secp256k1 key generated inside the configured PKCS#11 token (PATRON_SIGNER_PKCS11_*), never extractable. */
  async 'signer pkcs11-generate'(ctx) {
    const setting = configuredSigner(ctx, 'signer pkcs11-generate');
    if (setting.kind !== 'pkcs11') {
      throw new ValidationError(
        'PATRON_SIGNER_PKCS11_MODULE, PATRON_SIGNER_PKCS11_TOKEN_LABEL and PATRON_SIGNER_PKCS11_PIN (or _PIN_FILE) are required',
      );
    }
    const token = openToken(setting);
    try {
      const key = generateKey(token, { keyLabel: setting.keyLabel, crypto: selectCryptoBackend().backend });
      printResult(ctx.io, ctx.json, { signer: key.address, token: setting.tokenLabel, keyLabel: setting.keyLabel }, [
        `Generated ${key.address} in token "${setting.tokenLabel}" as "${setting.keyLabel}" (not extractable)`,
      ]);
    } finally {
      token.close();
    }
  },
};
