import { z } from 'zod';
import type { AccountService } from '../accounts/accountService.js';
import { CAP_RESETS, CAP_UNITS, policyRulesSchema } from '../policies/policySchema.js';
import { type CapUsage, type PolicyService, type PolicyView, policyNameSchema } from '../policies/policyService.js';
import { MAX_USER_ID_LENGTH } from '../policies/userScopeKey.js';
import { ADMIN_TAG } from './adminAccount.js';
import { DAPP_NOT_FOUND, dappParams, idParam } from './adminDapps.js';
import { jsonSchema } from './openApiParts.js';
import { answerId, type RouteDef, route } from './route.js';

/**
 * A dApp's sponsorship policies in the admin API (src/policies/README.md): the owner's dApp only, another
 * account's reads as "dApp not found". The rules are checked by the policy service (one schema, policySchema.ts),
 * whose message names the field: `Invalid rules.caps.0.limit: …`. The CLI parses its input with these schemas too.
 */
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The policy name rule of the service, with the field named in its message. */
const nameField = z.string({ error: 'name must be a string' }).transform((v, ctx) => {
  const r = policyNameSchema.safeParse(v);
  if (r.success) return r.data;
  ctx.addIssue({ code: 'custom', message: `name ${r.error.issues[0]?.message ?? 'is invalid'}` });
  return z.NEVER;
});

/**
 * Any JSON object here; the service validates it against the rules schema (so the message names the rule). The
 * document shows the rules schema itself.
 */
const rulesField = z
  .record(z.string(), z.unknown(), { error: 'rules must be a JSON object' })
  .meta(jsonSchema(policyRulesSchema, 'input'));

const activeField = z.boolean({ error: 'active must be a boolean value' });

const unknownField = (iss: { code: string; keys?: readonly string[] }) =>
  iss.code === 'unrecognized_keys' ? `Unknown field: ${(iss.keys ?? []).join(', ')}` : undefined;

export const createPolicyBody = z.strictObject(
  { name: nameField, active: activeField.optional(), rules: rulesField },
  { error: unknownField },
);

export const updatePolicyBody = z
  .strictObject(
    { name: nameField.optional(), active: activeField.optional(), rules: rulesField.optional() },
    { error: unknownField },
  )
  .refine((b) => b.name !== undefined || b.active !== undefined || b.rules !== undefined, {
    error: 'Give at least one of name, active, rules',
  });

const USER_RANGE = `user must be 1 to ${MAX_USER_ID_LENGTH} characters (the sponsorship token's sub)`;

export const policyUsageQuery = z.object({
  sender: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'sender must be an address (0x and 40 hex digits)' })
    .optional(),
  /** The end user (a sponsorship token's `sub`) whose per-user caps to show. */
  user: z.string().min(1, { error: USER_RANGE }).max(MAX_USER_ID_LENGTH, { error: USER_RANGE }).optional(),
});

export const policyView = z.object({
  policyId: z.string(),
  dappId: z.string(),
  name: z.string(),
  active: z.boolean(),
  rules: rulesField,
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const toPolicyView = (p: PolicyView): z.infer<typeof policyView> => ({
  policyId: p.id,
  dappId: p.dappId,
  name: p.name,
  active: p.active,
  // Stored only after the rules schema (an object) accepted it.
  rules: isObject(p.rules) ? p.rules : {},
  createdAt: new Date(p.createdAt).toISOString(),
  updatedAt: new Date(p.updatedAt).toISOString(),
});

export const capUsageView = z.object({
  scope: z.enum(['dapp', 'sender', 'user']),
  unit: z.enum(CAP_UNITS),
  resets: z.enum(CAP_RESETS),
  /** In the cap's unit as the rules write it: wei and ops as integers, USD as a decimal. */
  limit: z.string(),
  /** Settled in this window. */
  used: z.string(),
  /** Signed but not settled yet (counted against the limit). */
  reserved: z.string(),
  windowStart: z.string(),
  /** When the window resets; null for a cap that never does. */
  windowEnd: z.string().nullable(),
});

export const policyUsageView = z.object({
  policyId: z.string(),
  /** The sender whose per-sender caps are shown; without it only the dApp-wide caps are. */
  sender: z.string().nullable(),
  /** The user whose per-user caps are shown; without it the per-user caps are not. */
  user: z.string().nullable(),
  caps: z.array(capUsageView),
});

/** Micro-dollars (the ledger's USD unit) as the decimal the rules use: 1500000 → "1.5". */
export function microsToUsd(micros: string): string {
  const v = BigInt(micros);
  const fraction = (v % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${v / 1_000_000n}${fraction === '' ? '' : `.${fraction}`}`;
}

export const toCapUsageView = (c: CapUsage): z.infer<typeof capUsageView> => {
  const amount = (v: string) => (c.unit === 'usd' ? microsToUsd(v) : v);
  return {
    scope: c.scope,
    unit: c.unit,
    resets: CAP_RESETS.find((r) => r === c.resets) ?? 'never',
    limit: amount(c.limit),
    used: amount(c.used),
    reserved: amount(c.reserved),
    windowStart: new Date(c.windowStart).toISOString(),
    windowEnd: c.windowEnd === undefined ? null : new Date(c.windowEnd).toISOString(),
  };
};

const policyParams = z.object({ dappId: idParam, policyId: idParam });
const POLICY_NOT_FOUND = { '404': "dApp not found (another account's dApp included), or Policy not found" };
const RULES_INVALID = 'Invalid rules.<path>: the first broken rule, named';
const PATH = '/api/admin/dapps/:dappId/policies';
const EXAMPLE_RULES = {
  chainIds: [8453],
  caps: [{ scope: 'sender', unit: 'usd', limit: '5', resets: 'daily' }],
};

export function adminPolicyRoutes(deps: { accounts: AccountService; policies: PolicyService }): RouteDef[] {
  const { accounts, policies } = deps;
  // The dApp must be the caller's: another account's is reported like a missing one.
  const owned = async (accountId: string, dappId: string) => (await accounts.getDapp({ accountId, dappId })).id;
  const common = { auth: 'account', tag: ADMIN_TAG } as const;
  const current = async ({ account, params }: { account: { id: string }; params: z.infer<typeof policyParams> }) =>
    toPolicyView(await policies.get({ dappId: await owned(account.id, params.dappId), policyId: params.policyId }));
  return [
    route({
      ...common,
      method: 'GET',
      path: PATH,
      operationId: 'listDappPolicies',
      summary: "The dApp's sponsorship policies, with their rules",
      params: dappParams,
      answer: { envelope: 'Policies fetched', data: z.array(policyView) },
      errors: DAPP_NOT_FOUND,
      handler: async ({ account, params }) =>
        (await policies.list(await owned(account.id, params.dappId))).map(toPolicyView),
    }),
    route({
      ...common,
      method: 'POST',
      path: PATH,
      operationId: 'createDappPolicy',
      summary: 'Create a policy (active unless `active: false`)',
      params: dappParams,
      body: createPolicyBody,
      example: { name: 'Base, $5 a day per sender', rules: EXAMPLE_RULES },
      answer: { envelope: 'Policy created', data: policyView },
      errors: {
        '400': `name, active or rules invalid, or an unknown field; ${RULES_INVALID}`,
        ...DAPP_NOT_FOUND,
        '409': 'A policy of the dApp already has this name, or the dApp has the most policies allowed',
      },
      audit: { action: 'policy.create', target: answerId('policyId') },
      handler: async ({ account, params, body }) => {
        const dappId = await owned(account.id, params.dappId);
        return toPolicyView(
          await policies.create({
            dappId,
            name: body.name,
            rules: body.rules,
            ...(body.active === undefined ? {} : { active: body.active }),
          }),
        );
      },
    }),
    route({
      ...common,
      method: 'GET',
      path: `${PATH}/:policyId`,
      operationId: 'getDappPolicy',
      summary: 'One policy',
      params: policyParams,
      answer: { envelope: 'Policy fetched', data: policyView },
      errors: POLICY_NOT_FOUND,
      handler: async ({ account, params }) =>
        toPolicyView(await policies.get({ dappId: await owned(account.id, params.dappId), policyId: params.policyId })),
    }),
    route({
      ...common,
      method: 'PATCH',
      path: `${PATH}/:policyId`,
      operationId: 'updateDappPolicy',
      summary: 'Rename, activate or deactivate a policy, or replace its rules (at least one)',
      params: policyParams,
      body: updatePolicyBody,
      example: { active: false },
      answer: { envelope: 'Policy updated', data: policyView },
      errors: {
        '400': `name, active or rules invalid, an unknown field, or none given; ${RULES_INVALID}`,
        ...POLICY_NOT_FOUND,
        '409': 'Another policy of the dApp already has this name',
      },
      audit: { action: 'policy.update', before: current },
      handler: async ({ account, params, body }) => {
        const dappId = await owned(account.id, params.dappId);
        return toPolicyView(await policies.update({ dappId, policyId: params.policyId, ...body }));
      },
    }),
    route({
      ...common,
      method: 'DELETE',
      path: `${PATH}/:policyId`,
      operationId: 'deleteDappPolicy',
      summary: 'Delete a policy (its spend counters stay in the ledger)',
      params: policyParams,
      answer: { envelope: 'Policy deleted' },
      errors: POLICY_NOT_FOUND,
      audit: { action: 'policy.delete', before: current },
      handler: async ({ account, params }) => {
        await policies.delete({ dappId: await owned(account.id, params.dappId), policyId: params.policyId });
        return undefined;
      },
    }),
    route({
      ...common,
      method: 'GET',
      path: `${PATH}/:policyId/usage`,
      operationId: 'getDappPolicyUsage',
      summary:
        "Each cap's current window: used, reserved, limit, and when it resets (per-sender caps with `sender`, per-user caps with `user`)",
      params: policyParams,
      query: policyUsageQuery,
      answer: { envelope: 'Policy usage fetched', data: policyUsageView },
      errors: { '400': 'sender is not an address, or user is empty or too long', ...POLICY_NOT_FOUND },
      handler: async ({ account, params, query }) => {
        const dappId = await owned(account.id, params.dappId);
        const { sender, user } = query;
        const caps = await policies.usage({ dappId, policyId: params.policyId, sender, user });
        return {
          policyId: params.policyId,
          sender: sender ?? null,
          user: user ?? null,
          caps: caps.map(toCapUsageView),
        };
      },
    }),
  ];
}
