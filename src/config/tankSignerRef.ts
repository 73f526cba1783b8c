import path from 'node:path';
import { z } from 'zod';

/**
 * Where a gas tank's owner key is (issue 35; docs/guides/mee-gas-tanks.md): a reference to a key in one of the
 * signer back ends the paymaster's own key may use (signerSettings.ts), stored as JSON in `mee_gas_tanks.signer`.
 * It never holds a secret: no private key, no keystore password, no PIN. The secrets stay in files on the machine
 * that signs (read when the key is opened), so a copy of the database opens no tank.
 *
 * It sits on the ground floor beside the signer settings, not in `mee/`, because the store (layer 2) parses it.
 */
const absolutePath = (what: string) =>
  z
    .string()
    .min(1, { error: `${what} is required` })
    .refine((p) => path.isAbsolute(p), { error: `${what} must be an absolute path` });

const label = (what: string) => z.string().min(1, { error: `${what} is required` });

export const tankSignerRefSchema = z.discriminatedUnion(
  'kind',
  [
    /** An encrypted JSON keystore (Web3 Secret Storage v3), its password in a file of its own. */
    z.strictObject({
      kind: z.literal('keystore'),
      file: absolutePath('file'),
      passwordFile: absolutePath('passwordFile'),
    }),
    /** A secp256k1 key inside a PKCS#11 token, found by the token's and the key's labels; the user PIN in a file. */
    z.strictObject({
      kind: z.literal('pkcs11'),
      module: absolutePath('module'),
      tokenLabel: label('tokenLabel'),
      keyLabel: label('keyLabel'),
      pinFile: absolutePath('pinFile'),
    }),
    /** An AWS KMS key of spec ECC_SECG_P256K1; credentials from the AWS SDK's default chain. */
    z.strictObject({
      kind: z.literal('kms'),
      keyId: label('keyId'),
      region: z.string().min(1).optional(),
      endpoint: z.url({ error: 'endpoint must be an absolute URL' }).optional(),
    }),
  ],
  { error: 'signer must be {"kind":"keystore"|"pkcs11"|"kms", …}' },
);

export type TankSignerRef = z.infer<typeof tankSignerRefSchema>;
