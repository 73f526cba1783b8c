import path from 'node:path';
import { generateMasterKeyHex, rotateMasterKey } from '../accounts/masterKey.js';
import { MASTER_KEY_PATTERN } from '../config/config.js';
import { ValidationError } from '../errors/PatronError.js';
import { type CliIo, printResult } from './cliOutput.js';
import type { CommandContext } from './commands.js';

/**
 * `patron master-key generate` needs neither configuration nor database (it runs before either is opened, so it
 * works on a machine that has no PATRON_MASTER_KEY yet): the only command that prints a master key.
 */
export function generateMasterKey(args: { io: CliIo; json: boolean }): void {
  const key = generateMasterKeyHex();
  printResult(args.io, args.json, { masterKey: key }, [key]);
}

/**
 * `patron master-key rotate`: every secret re-encrypted from the current key (PATRON_MASTER_KEY, checked at open
 * like every command) to PATRON_NEW_MASTER_KEY, in one transaction. The new key comes from the environment, never
 * argv (it would show in `ps` and the shell history), and is never printed.
 */
export const masterKeyCommands: Record<string, (ctx: CommandContext) => Promise<void>> = {
  async 'master-key rotate'(ctx) {
    const nextHex = ctx.env.PATRON_NEW_MASTER_KEY ?? '';
    if (nextHex === '') {
      throw new ValidationError(
        'give the new key in PATRON_NEW_MASTER_KEY (make one with `patron master-key generate`)',
      );
    }
    if (!MASTER_KEY_PATTERN.test(nextHex)) {
      throw new ValidationError('PATRON_NEW_MASTER_KEY must be 32 bytes as 64 hex characters');
    }
    const next = Buffer.from(nextHex.replace(/^0x/, ''), 'hex');
    if (next.equals(ctx.masterKey.key)) {
      throw new ValidationError('PATRON_NEW_MASTER_KEY is the current master key: nothing to rotate');
    }
    const counts = await rotateMasterKey({
      secrets: ctx.masterKey.secrets,
      current: ctx.masterKey.key,
      next,
      source: ctx.masterKey.source,
      now: Date.now(),
    });
    const where =
      ctx.config.masterKeyHex === undefined
        ? `write it into ${path.join(ctx.config.dataDir, 'master.key')} (or set PATRON_MASTER_KEY to it)`
        : 'set PATRON_MASTER_KEY to it on every instance';
    printResult(ctx.io, ctx.json, { rotated: counts }, [
      `Re-encrypted ${counts.dappKeys} dApp API key(s), ${counts.webhookSecrets} webhook signing secret(s) and ${counts.eventEndpointSecrets} event endpoint secret(s) with the new master key.`,
      `Now ${where} (the key in PATRON_NEW_MASTER_KEY), then start Patron; with the old key it refuses to start.`,
    ]);
  },
};
