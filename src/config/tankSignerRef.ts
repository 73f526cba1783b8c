import path from 'node:path';
import { z } from 'zod';

/**
 * A gas tank's owner key (src/mee/tankSigner.ts opens it; docs/guides/signer-backends.md, "A gas tank's owner key"):
 * where it is, in one of the back ends the paymaster signer has, never the key itself. The reference is stored as JSON
 * in `mee_gas_tanks.signer`, so it names secrets only by the file that holds them (a keystore's password, a token's
 * PIN), as PATRON_SIGNER_PKCS11_PIN_FILE does: a database dump must not open the tank. An environment variable's name
 * is not offered: only src/config's loadConfig reads the environment, and its unknown-setting check refuses PATRON_*
 * names it does not know.
 * Strict objects: a field the schema does not know (a `privateKey`, a `pin` value) is refused, not dropped.
 */
const absolutePath = z
  .string()
  .min(1)
  .refine((p) => path.isAbsolute(p), { error: 'must be an absolute path' });
const secretFile = z.strictObject({ file: absolutePath });

const keystoreRef = z.strictObject({
  kind: z.literal('keystore'),
  /** A Web3 Secret Storage v3 file (`patron signer keystore`, `cast wallet new`, geth). */
  path: absolutePath,
  password: secretFile,
});
const pkcs11Ref = z.strictObject({
  kind: z.literal('pkcs11'),
  /** The vendor's PKCS#11 library. */
  module: absolutePath,
  tokenLabel: z.string().min(1),
  keyLabel: z.string().min(1),
  pin: secretFile,
  /** Sessions signed on in parallel; one is plenty for a tank (one signature per quote). */
  sessions: z.int().min(1).max(64).optional(),
});
const kmsRef = z.strictObject({
  kind: z.literal('kms'),
  keyId: z.string().min(1),
  region: z.string().min(1).optional(),
  /** A VPC endpoint or an emulator; AWS's endpoint for the region when absent. */
  endpoint: z.url().optional(),
});

export const tankSignerRefSchema = z.discriminatedUnion('kind', [keystoreRef, pkcs11Ref, kmsRef], {
  error: 'signer must be {"kind":"keystore"|"pkcs11"|"kms", …}',
});
export type TankSignerRef = z.infer<typeof tankSignerRefSchema>;
