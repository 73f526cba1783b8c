import { formatEther } from 'viem';
import { keeperTopupsQuery, toTopupView } from '../api/adminKeeperTopups.js';
import { parseInput } from '../errors/parseInput.js';
import { printResult, table } from './cliOutput.js';
import type { CommandContext } from './commands.js';

/**
 * `patron keeper history`: the deposit keeper's ledger (docs/guides/operations.md, "Deposit keeper"), newest first,
 * on the database directly like the other commands, through the admin API's query schema and view
 * (GET /api/admin/keeper/topups), so the filters, messages and fields are the same.
 */
type Command = (ctx: CommandContext) => Promise<void>;

function option(ctx: CommandContext, name: string): string | undefined {
  const v = ctx.options[name];
  const s = Array.isArray(v) ? v[v.length - 1] : v;
  return typeof s === 'string' && s !== '' ? s : undefined;
}

export const keeperCommands: Record<string, Command> = {
  async 'keeper history'(ctx) {
    const pairs: [string, string | undefined][] = [
      ['chainId', option(ctx, 'chain')],
      ['paymaster', option(ctx, 'paymaster')],
      ['limit', option(ctx, 'limit')],
      ['before', option(ctx, 'before')],
    ];
    const q = parseInput(
      keeperTopupsQuery,
      Object.fromEntries(pairs.filter((p): p is [string, string] => p[1] !== undefined)),
    );
    const rows = await ctx.depositTopups.list({
      chainId: q.chainId,
      paymaster: q.paymaster,
      before: q.before === undefined ? undefined : Date.parse(q.before),
      limit: q.limit,
    });
    const topups = rows.map(toTopupView);
    const shown = topups.map((t) => ({
      ...t,
      amount: `${formatEther(BigInt(t.amountWei))} ETH`,
      txHash: t.txHash ?? '',
    }));
    printResult(
      ctx.io,
      ctx.json,
      { topups },
      topups.length === 0
        ? ['No top-ups recorded.']
        : table(shown, ['createdAt', 'chainId', 'paymaster', 'mode', 'state', 'amount', 'txHash', 'reason']),
    );
  },
};
