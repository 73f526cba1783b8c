import path from 'node:path';
import { z } from 'zod';
import { integerFromEnv } from './envValues.js';

/**
 * Where the paymaster signer's key lives (docs/guides/signer-backends.md), from the environment (part of loadConfig,
 * the only reader of process.env). One source at most; none means the development default, a key generated into
 * `<dataDir>/signer.key`, which production mode refuses: a plain-text key on disk, different on every machine.
 */
export type SignerSetting =
  | { readonly kind: 'privateKey'; readonly privateKeyHex: string }
  | { readonly kind: 'keystore'; readonly file: string; readonly password: string }
  | { readonly kind: 'dataDir'; readonly dataDir: string }
  | Pkcs11SignerSetting
  | KmsSignerSetting;

/** A secp256k1 key inside a PKCS#11 token (an HSM, SoftHSM2), found by its token's and its own label. */
export interface Pkcs11SignerSetting {
  readonly kind: 'pkcs11';
  /** The vendor's PKCS#11 library (e.g. /usr/lib/softhsm/libsofthsm2.so). */
  readonly module: string;
  readonly tokenLabel: string;
  /** The user PIN, given directly or read from a file at start (trailing newline dropped). */
  readonly pin: { readonly value: string } | { readonly file: string };
  readonly keyLabel: string;
  /** Sessions signed on in parallel (a PKCS#11 session runs one operation at a time). */
  readonly sessions: number;
}

/** An AWS KMS key of spec ECC_SECG_P256K1; credentials come from the AWS SDK's default chain. */
export interface KmsSignerSetting {
  readonly kind: 'kms';
  readonly keyId: string;
  /** Undefined: the SDK's own (AWS_REGION, the profile). */
  readonly region: string | undefined;
  /** Undefined: AWS's endpoint for the region (set it for a VPC endpoint or an emulator). */
  readonly endpoint: string | undefined;
}

/** The key label `patron signer pkcs11-generate` gives a key when PATRON_SIGNER_PKCS11_KEY_LABEL is not set. */
export const DEFAULT_PKCS11_KEY_LABEL = 'patron-signer';

const text = z.string().optional();
const signerSchema = z.object({
  PATRON_SIGNER_PRIVATE_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || /^(0x)?[0-9a-fA-F]{64}$/.test(v), {
      error: 'PATRON_SIGNER_PRIVATE_KEY must be 32 bytes as 64 hex characters',
    }),
  PATRON_SIGNER_KEYSTORE: text,
  PATRON_SIGNER_KEYSTORE_PASSWORD: text,
  PATRON_SIGNER_PKCS11_MODULE: text,
  PATRON_SIGNER_PKCS11_TOKEN_LABEL: text,
  PATRON_SIGNER_PKCS11_PIN: text,
  PATRON_SIGNER_PKCS11_PIN_FILE: text,
  PATRON_SIGNER_PKCS11_KEY_LABEL: text,
  PATRON_SIGNER_PKCS11_SESSIONS: integerFromEnv('PATRON_SIGNER_PKCS11_SESSIONS', 1, 64),
  PATRON_SIGNER_KMS_KEY_ID: text,
  PATRON_SIGNER_KMS_REGION: text,
  PATRON_SIGNER_KMS_ENDPOINT: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || URL.canParse(v), {
      error: 'PATRON_SIGNER_KMS_ENDPOINT must be an absolute URL',
    }),
});
type SignerEnv = z.infer<typeof signerSchema>;

const given = (v: string | undefined): v is string => v !== undefined && v !== '';

function pkcs11From(e: SignerEnv, problems: string[]): Pkcs11SignerSetting | undefined {
  const module = e.PATRON_SIGNER_PKCS11_MODULE ?? '';
  const tokenLabel = e.PATRON_SIGNER_PKCS11_TOKEN_LABEL ?? '';
  if (tokenLabel === '') problems.push('PATRON_SIGNER_PKCS11_TOKEN_LABEL is required with PATRON_SIGNER_PKCS11_MODULE');
  const pinValue = e.PATRON_SIGNER_PKCS11_PIN;
  const pinFile = e.PATRON_SIGNER_PKCS11_PIN_FILE;
  if (given(pinValue) === given(pinFile)) {
    problems.push('give the token PIN in one of PATRON_SIGNER_PKCS11_PIN or PATRON_SIGNER_PKCS11_PIN_FILE');
  }
  if (problems.length > 0) return undefined;
  return {
    kind: 'pkcs11',
    module: path.resolve(module),
    tokenLabel,
    pin: given(pinFile) ? { file: path.resolve(pinFile) } : { value: pinValue ?? '' },
    keyLabel: given(e.PATRON_SIGNER_PKCS11_KEY_LABEL) ? e.PATRON_SIGNER_PKCS11_KEY_LABEL : DEFAULT_PKCS11_KEY_LABEL,
    sessions: e.PATRON_SIGNER_PKCS11_SESSIONS ?? 4,
  };
}

/**
 * The signer source and the problems with it. Production refuses the data-directory default: every key it may use is
 * either encrypted (keystore), held by a device (PKCS#11, KMS), or given by the environment, never written in clear.
 */
export function signerFromEnv(args: {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly production: boolean;
  readonly dataDir: string;
}): { signer: SignerSetting | undefined; problems: string[] } {
  const parsed = signerSchema.safeParse(args.env);
  if (!parsed.success) return { signer: undefined, problems: parsed.error.issues.map((i) => i.message) };
  const e = parsed.data;
  const problems: string[] = [];
  const sources = [
    ['PATRON_SIGNER_PRIVATE_KEY', e.PATRON_SIGNER_PRIVATE_KEY],
    ['PATRON_SIGNER_KEYSTORE', e.PATRON_SIGNER_KEYSTORE],
    ['PATRON_SIGNER_PKCS11_MODULE', e.PATRON_SIGNER_PKCS11_MODULE],
    ['PATRON_SIGNER_KMS_KEY_ID', e.PATRON_SIGNER_KMS_KEY_ID],
  ].filter(([, v]) => given(v));
  if (sources.length > 1) {
    problems.push(`set one signer source, not ${sources.map(([name]) => name).join(' and ')}`);
    return { signer: undefined, problems };
  }
  if (given(e.PATRON_SIGNER_KEYSTORE) && !given(e.PATRON_SIGNER_KEYSTORE_PASSWORD)) {
    problems.push('PATRON_SIGNER_KEYSTORE_PASSWORD is required with PATRON_SIGNER_KEYSTORE');
  }
  if (args.production && sources.length === 0) {
    // A signer generated into one machine's data directory would be a plain-text key, and differ between processes.
    problems.push(
      'a signer is required in production mode: PATRON_SIGNER_KEYSTORE, PATRON_SIGNER_PKCS11_MODULE, PATRON_SIGNER_KMS_KEY_ID or PATRON_SIGNER_PRIVATE_KEY',
    );
  }
  if (problems.length > 0) return { signer: undefined, problems };
  if (given(e.PATRON_SIGNER_KEYSTORE)) {
    const file = path.resolve(e.PATRON_SIGNER_KEYSTORE);
    return { signer: { kind: 'keystore', file, password: e.PATRON_SIGNER_KEYSTORE_PASSWORD ?? '' }, problems };
  }
  if (given(e.PATRON_SIGNER_PRIVATE_KEY)) {
    return { signer: { kind: 'privateKey', privateKeyHex: e.PATRON_SIGNER_PRIVATE_KEY }, problems };
  }
  if (given(e.PATRON_SIGNER_PKCS11_MODULE)) return { signer: pkcs11From(e, problems), problems };
  if (given(e.PATRON_SIGNER_KMS_KEY_ID)) {
    const signer: KmsSignerSetting = {
      kind: 'kms',
      keyId: e.PATRON_SIGNER_KMS_KEY_ID,
      region: given(e.PATRON_SIGNER_KMS_REGION) ? e.PATRON_SIGNER_KMS_REGION : undefined,
      endpoint: given(e.PATRON_SIGNER_KMS_ENDPOINT) ? e.PATRON_SIGNER_KMS_ENDPOINT : undefined,
    };
    return { signer, problems };
  }
  return { signer: { kind: 'dataDir', dataDir: args.dataDir }, problems };
}
