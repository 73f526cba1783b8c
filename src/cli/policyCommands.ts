import fs from 'node:fs';
import type { z } from 'zod';
import {
  createPolicyBody,
  type policyView,
  toCapUsageView,
  toPolicyView,
  updatePolicyBody,
} from '../api/adminPolicies.js';
import { ValidationError } from '../errors/PatronError.js';
import { parseInput } from '../errors/parseInput.js';
import { printResult, table } from './cliOutput.js';
import type { CommandContext } from './commands.js';

/**
 * `patron policies …`: a dApp's sponsorship policies, on the database directly like the other commands, through
 * the same policy service and the same input schemas as the admin API (so the messages are the same). The
 * operator names the dApp by id (like `dapp limits`): the CLI has the database, there is no account to check.
 */
type Command = (ctx: CommandContext) => Promise<void>;

function option(ctx: CommandContext, name: string): string | undefined {
  const v = ctx.options[name];
  const s = Array.isArray(v) ? v[v.length - 1] : v;
  return typeof s === 'string' && s !== '' ? s : undefined;
}

function required(ctx: CommandContext, name: string): string {
  const v = option(ctx, name);
  if (v === undefined) throw new ValidationError(`--${name} is required`);
  return v;
}

/** `--dapp`, which must exist. */
async function dappOption(ctx: CommandContext): Promise<string> {
  const dappId = required(ctx, 'dapp');
  if ((await ctx.accounts.findDappById(dappId)) === undefined) throw new ValidationError(`No dApp ${dappId}`);
  return dappId;
}

/** `--rules '<json>'` or `--rules-file PATH` (not both); undefined when neither is given. */
function rulesOption(ctx: CommandContext): unknown {
  const inline = option(ctx, 'rules');
  const file = option(ctx, 'rules-file');
  if (inline !== undefined && file !== undefined) throw new ValidationError('give --rules or --rules-file, not both');
  if (inline === undefined && file === undefined) return undefined;
  let text = inline ?? '';
  if (file !== undefined) {
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      const code = err instanceof Error && 'code' in err ? String(err.code) : 'error';
      throw new ValidationError(`cannot read --rules-file ${file}: ${code}`);
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ValidationError(`${file === undefined ? '--rules' : `--rules-file ${file}`} is not valid JSON`);
  }
}

/** `--active true|false`. */
function activeOption(ctx: CommandContext): boolean | undefined {
  const v = option(ctx, 'active');
  if (v === undefined) return undefined;
  if (v !== 'true' && v !== 'false') throw new ValidationError('--active takes true or false');
  return v === 'true';
}

/** The flags as the API's body, so one schema checks both. */
function bodyOf(ctx: CommandContext): Record<string, unknown> {
  const name = option(ctx, 'name');
  const active = activeOption(ctx);
  const rules = rulesOption(ctx);
  return {
    ...(name === undefined ? {} : { name }),
    ...(active === undefined ? {} : { active }),
    ...(rules === undefined ? {} : { rules }),
  };
}

type PolicyOut = z.infer<typeof policyView>;

const describe = (p: PolicyOut) => [
  `Policy "${p.name}" (${p.policyId}) of dApp ${p.dappId}: ${p.active ? 'active' : 'inactive'}`,
  `  rules ${JSON.stringify(p.rules)}`,
];

export const policyCommands: Record<string, Command> = {
  async 'policies list'(ctx) {
    const policies = (await ctx.policies.list(await dappOption(ctx))).map(toPolicyView);
    const rows = policies.map((p) => ({ ...p, rules: JSON.stringify(p.rules) }));
    printResult(ctx.io, ctx.json, { policies }, table(rows, ['policyId', 'name', 'active', 'rules']));
  },

  async 'policies create'(ctx) {
    const dappId = await dappOption(ctx);
    required(ctx, 'name');
    if (rulesOption(ctx) === undefined) throw new ValidationError('--rules or --rules-file is required');
    const body = parseInput(createPolicyBody, bodyOf(ctx));
    const created = await ctx.policies.create({
      dappId,
      name: body.name,
      rules: body.rules,
      ...(body.active === undefined ? {} : { active: body.active }),
    });
    const policy = toPolicyView(created);
    printResult(ctx.io, ctx.json, { policy }, describe(policy));
  },

  async 'policies get'(ctx) {
    const dappId = await dappOption(ctx);
    const policy = toPolicyView(await ctx.policies.get({ dappId, policyId: required(ctx, 'id') }));
    printResult(ctx.io, ctx.json, { policy }, describe(policy));
  },

  async 'policies update'(ctx) {
    const dappId = await dappOption(ctx);
    const policyId = required(ctx, 'id');
    const body = bodyOf(ctx);
    if (Object.keys(body).length === 0) throw new ValidationError('give at least one of --name, --active, --rules');
    const updated = await ctx.policies.update({ dappId, policyId, ...parseInput(updatePolicyBody, body) });
    const policy = toPolicyView(updated);
    printResult(ctx.io, ctx.json, { policy }, describe(policy));
  },

  async 'policies delete'(ctx) {
    const dappId = await dappOption(ctx);
    const policyId = required(ctx, 'id');
    await ctx.policies.delete({ dappId, policyId });
    printResult(ctx.io, ctx.json, { deleted: policyId }, [`Deleted policy ${policyId}`]);
  },

  async 'policies usage'(ctx) {
    const dappId = await dappOption(ctx);
    const policyId = required(ctx, 'id');
    const sender = option(ctx, 'sender');
    const user = option(ctx, 'user');
    const caps = (await ctx.policies.usage({ dappId, policyId, sender, user })).map(toCapUsageView);
    const rows = caps.map((c) => ({ ...c, resetsAt: c.windowEnd ?? 'never' }));
    printResult(
      ctx.io,
      ctx.json,
      { policyId, sender: sender ?? null, user: user ?? null, caps },
      table(rows, ['scope', 'unit', 'resets', 'used', 'reserved', 'limit', 'resetsAt']),
    );
  },
};
