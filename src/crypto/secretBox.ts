import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ensureSecretFile } from '../config/ensureSecretFile.js';
import { StartRefusedError } from '../errors/StartRefusedError.js';

/**
 * Authenticated encryption (AES-256-GCM) of secrets that must be readable again (API keys to show the owner,
 * later webhook signing secrets), with a master key kept outside the database: a database leak alone does
 * not reveal them. Format: `v1.<iv>.<ciphertext||tag>`, base64url.
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('master key must be 32 bytes');
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `v1.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    open(sealed) {
      const parts = sealed.split('.');
      const [version, ivText, bodyText] = parts;
      if (parts.length !== 3 || version !== 'v1' || ivText === undefined || bodyText === undefined) {
        throw new Error('unknown sealed format');
      }
      const body = Buffer.from(bodyText, 'base64url');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivText, 'base64url'));
        decipher.setAuthTag(body.subarray(body.length - 16));
        return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
      } catch (cause) {
        // The cipher's own words ("Unsupported state or unable to authenticate data") do not say what to fix.
        throw new Error(
          'a stored secret does not open with the master key (PATRON_MASTER_KEY): it was sealed with another key, or altered',
          { cause },
        );
      }
    },
  };
}

/**
 * The master key: from configuration when given, else from `<dataDir>/master.key`, created on first use with
 * owner-only permissions (embedded mode only; production requires PATRON_MASTER_KEY, see config). `createFile: false`
 * (the CLI) only reads it: a command must not leave a new plain-text key beside a database it did not make.
 */
export function loadMasterKey(args: {
  masterKeyHex: string | undefined;
  dataDir: string;
  createFile?: boolean;
}): Buffer {
  if (args.masterKeyHex !== undefined) return Buffer.from(args.masterKeyHex, 'hex');
  const file = path.join(args.dataDir, 'master.key');
  if (args.createFile === false && !existsSync(file)) {
    throw new StartRefusedError(
      `PATRON_MASTER_KEY is not set and ${file} does not exist: set PATRON_MASTER_KEY to the key the service runs with (the CLI never creates a master key)`,
    );
  }
  const hex = ensureSecretFile(file, () => randomBytes(32).toString('hex'));
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${file} does not hold a 32-byte hex key`);
  return Buffer.from(hex, 'hex');
}
