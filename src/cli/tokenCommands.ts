import fs from 'node:fs';
import type { DappTokenSettings } from '../dappSettings/sponsorshipTokenSettings.js';
import { ValidationError } from '../errors/PatronError.js';
import { requireOption } from './cliOptions.js';
import { printResult } from './cliOutput.js';
import { accountOption, type CommandContext } from './commands.js';

/** `--settings '<json>'` or `--settings-file PATH` (exactly one). */
function settingsOption(ctx: CommandContext): unknown {
  const inline = ctx.options.settings;
  const file = ctx.options['settings-file'];
  if (typeof inline === 'string' && typeof file === 'string') {
    throw new ValidationError('give --settings or --settings-file, not both');
  }
  let text: string;
  if (typeof file === 'string') {
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      const code = err instanceof Error && 'code' in err ? String(err.code) : 'error';
      throw new ValidationError(`cannot read --settings-file ${file}: ${code}`);
    }
  } else if (typeof inline === 'string') {
    text = inline;
  } else {
    throw new ValidationError('dapp tokens set needs --settings JSON or --settings-file PATH');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ValidationError(
      `${typeof file === 'string' ? `--settings-file ${file}` : '--settings'} is not valid JSON`,
    );
  }
}

function print(ctx: CommandContext, dappId: string, settings: DappTokenSettings): void {
  printResult(ctx.io, ctx.json, { dappId, sponsorshipTokens: settings }, [
    settings.keys.length === 0
      ? `dApp ${dappId}: no sponsorship tokens`
      : `dApp ${dappId}: tokens ${settings.required ? 'required' : 'checked when carried (not required)'}`,
    ...settings.keys.map(
      (k) => `  ${k.id}  ${k.kind}${k.kind === 'jwksUrl' ? ` ${k.url}` : k.kind === 'address' ? ` ${k.address}` : ''}`,
    ),
  ]);
}

const NO_TOKENS: DappTokenSettings = { required: false, keys: [] };

/**
 * `patron dapp tokens show|set|clear`: the dApp owner's sponsorship-token settings (docs/guides/sponsorship-tokens.md),
 * as with the admin API: `set` replaces the whole document (`--settings` JSON, the API's body), `clear` turns tokens
 * off, `show` prints them.
 */
export const tokenCommands: Record<string, (ctx: CommandContext) => Promise<void>> = {
  async 'dapp tokens show'(ctx) {
    const account = await accountOption(ctx);
    const dappId = requireOption(ctx, 'id');
    print(ctx, dappId, (await ctx.accounts.getDapp({ accountId: account.id, dappId })).sponsorshipTokens ?? NO_TOKENS);
  },
  async 'dapp tokens set'(ctx) {
    const account = await accountOption(ctx);
    const dappId = requireOption(ctx, 'id');
    const settings = settingsOption(ctx);
    print(ctx, dappId, await ctx.accounts.setDappSponsorshipTokens({ accountId: account.id, dappId, settings }));
  },
  async 'dapp tokens clear'(ctx) {
    const account = await accountOption(ctx);
    const dappId = requireOption(ctx, 'id');
    print(ctx, dappId, await ctx.accounts.setDappSponsorshipTokens({ accountId: account.id, dappId, settings: {} }));
  },
};
