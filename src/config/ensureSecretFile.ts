import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Returns the trimmed contents of a secret file, creating it first with `create()`'s output when missing:
 * the directory with mode 0700, the file with 0600. The file is written aside and hard-linked into place, so
 * two processes starting together agree on one secret and neither reads a half-written file.
 */
export function ensureSecretFile(file: string, create: () => string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  if (!fs.existsSync(file)) {
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    fs.writeFileSync(tmp, `${create()}\n`, { mode: 0o600 });
    try {
      fs.linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.unlinkSync(tmp);
    }
  }
  return fs.readFileSync(file, 'utf8').trim();
}
