import { tokenGuaranteesView } from '../api/adminTokenGuarantees.js';
import { ValidationError } from '../errors/PatronError.js';
import { option, requireOption } from './cliOptions.js';
import { printResult } from './cliOutput.js';
import type { CommandContext } from './commands.js';

/** Shows a dApp's token guarantees and its cap's current window, as the admin API's GET answers. */
async function print(ctx: CommandContext, dapp: Parameters<typeof tokenGuaranteesView>[1]): Promise<void> {
  const view = await tokenGuaranteesView(ctx.policies, dapp);
  const { tokenGuarantees: g, usage: u } = view;
  const cap = g.cap === undefined ? 'no cap' : `cap ${g.cap.limitWei} wei, ${g.cap.resets}`;
  printResult(ctx.io, ctx.json, view, [
    `dApp ${dapp.id}: token guarantees ${g.enabled ? 'on' : 'off'} (${cap})`,
    ...(u === null
      ? []
      : [
          `  this window: used ${u.usedWei} wei, reserved ${u.reservedWei} wei, from ${u.windowStart}${u.windowEnd === undefined ? '' : ` to ${u.windowEnd}`}`,
        ]),
  ]);
}

async function dappOf(ctx: CommandContext) {
  const dappId = requireOption(ctx, 'id');
  const dapp = await ctx.accounts.findDappById(dappId);
  if (dapp === undefined) throw new ValidationError(`No dApp ${dappId}`);
  return dapp;
}

/**
 * `patron dapp guarantees show|on|off` (docs/guides/token-mode.md, "The dApp's guarantee"): whether Patron signs the
 * token mode's mode 2 for a dApp, for the operator (any dApp, as `dapp limits`). `on` needs the cap (`--cap-wei`,
 * `--resets`): no unbounded guarantee; `off` keeps the cap for a later `on`.
 */
export const guaranteeCommands: Record<string, (ctx: CommandContext) => Promise<void>> = {
  async 'dapp guarantees show'(ctx) {
    await print(ctx, await dappOf(ctx));
  },
  async 'dapp guarantees on'(ctx) {
    const dapp = await dappOf(ctx);
    const limitWei = option(ctx, 'cap-wei');
    const resets = option(ctx, 'resets');
    if (limitWei === undefined || resets === undefined) {
      throw new ValidationError(
        'dapp guarantees on needs its cap: --cap-wei WEI --resets hourly|daily|weekly|monthly|never (no unbounded guarantee)',
      );
    }
    const tokenGuarantees = await ctx.accounts.setDappTokenGuarantees({
      accountId: undefined,
      dappId: dapp.id,
      guarantees: { enabled: true, cap: { limitWei, resets } },
    });
    await print(ctx, { id: dapp.id, tokenGuarantees });
  },
  async 'dapp guarantees off'(ctx) {
    const dapp = await dappOf(ctx);
    const cap = dapp.tokenGuarantees?.cap;
    const tokenGuarantees = await ctx.accounts.setDappTokenGuarantees({
      accountId: undefined,
      dappId: dapp.id,
      guarantees: { enabled: false, ...(cap === undefined ? {} : { cap }) },
    });
    await print(ctx, { id: dapp.id, tokenGuarantees });
  },
};
