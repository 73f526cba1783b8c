import { ValidationError } from '../errors/PatronError.js';
import { requireOption } from './cliOptions.js';
import { printResult } from './cliOutput.js';
import { accountOption, type CommandContext } from './commands.js';

/** Comma-separated and/or repeated: `--origins a,b --origins c`. */
function listOption(ctx: CommandContext, name: string): string[] | undefined {
  const v = ctx.options[name];
  if (v === undefined) return undefined;
  const list = (Array.isArray(v) ? v : typeof v === 'string' ? [v] : [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (list.length === 0) throw new ValidationError(`--${name} needs at least one value (--clear lifts every rule)`);
  return list;
}

/**
 * `patron dapp restrict`: who may use a dApp's API key (docs/guides/security-keys.md), set by the dApp's owner
 * (`--account`) as with the admin API's PUT: the flags given are the whole set, the rules left out are lifted;
 * `--clear` lifts all; no flag shows them.
 */
export const restrictCommands: Record<string, (ctx: CommandContext) => Promise<void>> = {
  async 'dapp restrict'(ctx) {
    const account = await accountOption(ctx);
    const dappId = requireOption(ctx, 'id');
    const origins = listOption(ctx, 'origins');
    const cidrs = listOption(ctx, 'cidrs');
    const methods = listOption(ctx, 'methods');
    const allowNoOrigin = ctx.options['allow-no-origin'] === true;
    const setting = ctx.options.clear === true || origins !== undefined || cidrs !== undefined || methods !== undefined;
    if (ctx.options.clear === true && (origins ?? cidrs ?? methods) !== undefined) {
      throw new ValidationError('--clear lifts every rule: give it alone');
    }
    const restrictions = setting
      ? await ctx.accounts.setDappRestrictions({
          accountId: account.id,
          dappId,
          restrictions: {
            ...(origins === undefined ? {} : { origins }),
            ...(allowNoOrigin ? { allowNoOrigin } : {}),
            ...(cidrs === undefined ? {} : { cidrs }),
            ...(methods === undefined ? {} : { methods }),
          },
        })
      : (await ctx.accounts.getDapp({ accountId: account.id, dappId })).restrictions.doc;
    const none = Object.keys(restrictions).length === 0;
    printResult(ctx.io, ctx.json, { dappId, restrictions }, [
      none ? `dApp ${dappId}: no restrictions (any origin, IP and method)` : `dApp ${dappId}:`,
      ...(restrictions.origins === undefined
        ? []
        : [`  origins  ${restrictions.origins.join(', ')}${restrictions.allowNoOrigin === true ? ' (and none)' : ''}`]),
      ...(restrictions.cidrs === undefined ? [] : [`  cidrs    ${restrictions.cidrs.join(', ')}`]),
      ...(restrictions.methods === undefined ? [] : [`  methods  ${restrictions.methods.join(', ')}`]),
    ]);
  },
};
