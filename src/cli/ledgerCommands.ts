import { once } from 'node:events';
import fs from 'node:fs';
import { ledgerCsv } from '../api/ledgerCsv.js';
import {
  decodeCursor,
  encodeCursor,
  filterOf,
  ledgerFilterQuery,
  ledgerListQuery,
  ledgerStatsQuery,
  toLedgerItemView,
  toLedgerStatsView,
} from '../api/ledgerWire.js';
import { ValidationError } from '../errors/PatronError.js';
import { parseInput } from '../errors/parseInput.js';
import { printResult, table } from './cliOutput.js';
import type { CommandContext } from './commands.js';

/**
 * `patron ledger list|stats|export`: a dApp's itemized ledger (docs/guides/ledger.md), on the database directly like
 * the other commands, through the admin API's schemas and views (so the filters, messages and fields are the same).
 * The operator names the dApp by id (like `policies`): the CLI has the database, there is no account to check.
 */
type Command = (ctx: CommandContext) => Promise<void>;

function option(ctx: CommandContext, name: string): string | undefined {
  const v = ctx.options[name];
  const s = Array.isArray(v) ? v[v.length - 1] : v;
  return typeof s === 'string' && s !== '' ? s : undefined;
}

async function dappOption(ctx: CommandContext): Promise<string> {
  const dappId = option(ctx, 'dapp');
  if (dappId === undefined) throw new ValidationError('--dapp is required');
  if ((await ctx.accounts.findDappById(dappId)) === undefined) throw new ValidationError(`No dApp ${dappId}`);
  return dappId;
}

/** The flags as the API's query (--policy is policyId, --chain chainId, --group-by groupBy). */
function queryOf(ctx: CommandContext): Record<string, string> {
  const pairs: [string, string | undefined][] = [
    ['from', option(ctx, 'from')],
    ['to', option(ctx, 'to')],
    ['policyId', option(ctx, 'policy')],
    ['sender', option(ctx, 'sender')],
    ['user', option(ctx, 'user')],
    ['status', option(ctx, 'status')],
    ['chainId', option(ctx, 'chain')],
    ['limit', option(ctx, 'limit')],
    ['cursor', option(ctx, 'cursor')],
    ['groupBy', option(ctx, 'group-by')],
  ];
  return Object.fromEntries(pairs.filter((p): p is [string, string] => p[1] !== undefined));
}

/** A new file (an existing one is never overwritten), opened now so a refusal is this command's message. */
function openNew(file: string): number {
  try {
    return fs.openSync(file, 'wx');
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? String(err.code) : 'error';
    throw new ValidationError(
      code === 'EEXIST' ? `--out ${file} exists: give a new file name` : `cannot create --out ${file}: ${code}`,
    );
  }
}

export const ledgerCommands: Record<string, Command> = {
  async 'ledger list'(ctx) {
    const dappId = await dappOption(ctx);
    const { cursor, limit, ...filters } = parseInput(ledgerListQuery, queryOf(ctx));
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    if (cursor !== undefined && after === undefined) throw new ValidationError('--cursor must be a nextCursor');
    const items = await ctx.ledger.list({ filter: filterOf(dappId, filters), after, limit });
    const last = items.at(-1);
    const nextCursor = items.length === limit && last !== undefined ? encodeCursor(last) : null;
    const views = items.map(toLedgerItemView);
    printResult(ctx.io, ctx.json, { items: views, nextCursor }, [
      ...table(views, ['createdAt', 'status', 'sender', 'user', 'reservedWei', 'actualWei', 'actualUsd', 'txHash']),
      ...(nextCursor === null ? [] : [`more: --cursor ${nextCursor}`]),
    ]);
  },

  async 'ledger stats'(ctx) {
    const dappId = await dappOption(ctx);
    const { groupBy, ...filters } = parseInput(ledgerStatsQuery, queryOf(ctx));
    const filter = filterOf(dappId, filters);
    const groups = await ctx.ledger.stats({ filter, groupBy });
    const [overall] = await ctx.ledger.stats({ filter, groupBy: [] });
    const stats = toLedgerStatsView({ groupBy, groups, overall });
    const keys = groupBy.map((g) => (g === 'policy' ? 'policyId' : g === 'chain' ? 'chainId' : g));
    printResult(ctx.io, ctx.json, { stats }, [
      ...table(stats.groups, [...keys, 'count', 'reservedWei', 'settledWei', 'settledUsd']),
      `total: ${stats.total.count} ops, settled ${stats.total.settledWei} wei (${stats.total.settledUsd === null ? 'no USD price' : `$${stats.total.settledUsd}`})`,
    ]);
  },

  /** The CSV, page by page, to --out (written as it is read, waiting when the disk is slower) or standard output. */
  async 'ledger export'(ctx) {
    const dappId = await dappOption(ctx);
    const filter = filterOf(dappId, parseInput(ledgerFilterQuery, queryOf(ctx)));
    const out = option(ctx, 'out');
    const file = out === undefined ? undefined : fs.createWriteStream('', { fd: openNew(out) });
    try {
      for await (const chunk of ledgerCsv({ ledger: ctx.ledger, filter })) {
        if (file === undefined) ctx.io.stdout(chunk);
        else if (!file.write(chunk)) await once(file, 'drain');
      }
    } finally {
      if (file !== undefined) await new Promise<void>((resolve) => file.end(resolve));
    }
    if (file !== undefined) printResult(ctx.io, ctx.json, { out }, [`Ledger written to ${out}`]);
  },
};
