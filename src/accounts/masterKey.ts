import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { createSecretBox, loadMasterKey } from '../crypto/secretBox.js';
import { PatronError } from '../errors/PatronError.js';
import { StartRefusedError } from '../errors/StartRefusedError.js';
import type { SealedSecretsRepository } from '../store/tenants/sealedSecretsRepository.js';

/**
 * The master key's check value: an HMAC-SHA256 of a fixed label under the key. Only the same key reproduces it,
 * and it reveals nothing of the key (nor of any secret), so it can sit in the database beside what it guards.
 */
const CHECK_LABEL = 'patron master key check v1';

export function masterKeyCheckValue(key: Buffer): string {
  return `v1.${createHmac('sha256', key).update(CHECK_LABEL).digest('base64url')}`;
}

/** A fresh master key, exactly as PATRON_MASTER_KEY takes it: 32 random bytes as 64 hex characters. */
export function generateMasterKeyHex(): string {
  return randomBytes(32).toString('hex');
}

/** How the key was given, for the messages: the variable, or the dev-mode file used when it is not set. */
export function masterKeySource(args: { masterKeyHex: string | undefined; dataDir: string }): string {
  return args.masterKeyHex !== undefined
    ? 'PATRON_MASTER_KEY'
    : `the master key in ${path.join(args.dataDir, 'master.key')} (PATRON_MASTER_KEY is not set)`;
}

function sameCheck(args: { stored: string; expected: string }): boolean {
  const x = Buffer.from(args.stored);
  const y = Buffer.from(args.expected);
  return x.length === y.length && timingSafeEqual(x, y);
}

function mismatch(source: string): StartRefusedError {
  return new StartRefusedError(
    `${source} does not match this database: its secrets (dApp API keys, webhook signing secrets) are encrypted ` +
      'with another master key. Set PATRON_MASTER_KEY to the key this database was created or last rotated with, ' +
      'or restore the backup that goes with this key.',
  );
}

/**
 * Refuses a master key that is not the database's, once at start (server and CLI), so that a wrong key fails there
 * and not on the first secret opened while serving. The check value is written by the first start with a key; a
 * database from before it (migration 0015) has its key checked against a stored secret first, if it holds one.
 */
export async function verifyMasterKey(args: {
  secrets: SealedSecretsRepository;
  key: Buffer;
  source: string;
  now: number;
}): Promise<void> {
  const expected = masterKeyCheckValue(args.key);
  const stored = await args.secrets.readCheck();
  if (stored !== undefined) {
    if (!sameCheck({ stored, expected })) throw mismatch(args.source);
    return;
  }
  const sealed = await args.secrets.anySealed();
  if (sealed !== undefined) {
    try {
      createSecretBox(args.key).open(sealed);
    } catch {
      throw mismatch(args.source);
    }
  }
  // Two first starts with different keys: one check value wins; the other start is refused by it.
  const written = await args.secrets.writeCheckOnce({ checkValue: expected, now: args.now });
  if (!sameCheck({ stored: written, expected })) throw mismatch(args.source);
}

/**
 * The master key, given (tests) or configured (PATRON_MASTER_KEY, else the data directory's file), checked against
 * the database (verifyMasterKey) once per start of the server and of each CLI command; and how it was given.
 */
export async function checkedMasterKey(args: {
  readonly config: { readonly masterKeyHex: string | undefined; readonly dataDir: string };
  readonly store: { readonly sealedSecrets: SealedSecretsRepository };
  /** A fixed key (tests), instead of the configured one. */
  readonly key?: Buffer | undefined;
  /** Whether a missing `<dataDir>/master.key` is created (the service's first start) or refused (the CLI). */
  readonly createKeyFile?: boolean;
  readonly now: () => number;
}): Promise<{ readonly key: Buffer; readonly source: string }> {
  const key =
    args.key ??
    loadMasterKey({
      masterKeyHex: args.config.masterKeyHex,
      dataDir: args.config.dataDir,
      createFile: args.createKeyFile ?? true,
    });
  const source = masterKeySource(args.config);
  await verifyMasterKey({ secrets: args.store.sealedSecrets, key, source, now: args.now() });
  return { key, source };
}

/**
 * Re-encrypts every secret sealed with `current` under `next` and replaces the check value, in one transaction.
 * Refuses a `current` that is not the database's, and a secret it does not open (nothing is changed then).
 */
export async function rotateMasterKey(args: {
  secrets: SealedSecretsRepository;
  current: Buffer;
  next: Buffer;
  source: string;
  now: number;
}): Promise<{ dappKeys: number; webhookSecrets: number; eventEndpointSecrets: number }> {
  await verifyMasterKey({ secrets: args.secrets, key: args.current, source: args.source, now: args.now });
  const from = createSecretBox(args.current);
  const to = createSecretBox(args.next);
  return args.secrets.resealAll({
    reseal: ({ sealed, ref }) => {
      let plain: string;
      try {
        plain = from.open(sealed);
      } catch {
        throw new PatronError(
          'CONFLICT',
          `the secret of ${ref.table === 'dapps' ? 'dApp' : 'webhook'} ${ref.id} does not open with ${args.source}: ` +
            'nothing was changed (was a secret written by a process with another key?)',
        );
      }
      return to.seal(plain);
    },
    checkValue: masterKeyCheckValue(args.next),
    now: args.now,
  });
}
