import { z } from 'zod';
import type { AccountService } from '../accounts/accountService.js';
import { GUARANTEE_CAP_RESETS, NO_TOKEN_GUARANTEES, tokenGuaranteesSchema } from '../dappSettings/tokenGuarantees.js';
import type { PolicyService } from '../policies/policyService.js';
import type { DappRecord } from '../store/records.js';
import { ADMIN_TAG } from './adminAccount.js';
import { DAPP_NOT_FOUND, dappParams } from './adminDapps.js';
import { type RouteDef, route } from './route.js';

/** The cap's current window (policies/guaranteeCap.ts): wei as decimal strings, times as ISO 8601. */
const usageView = z.object({
  limitWei: z.string(),
  resets: z.enum(GUARANTEE_CAP_RESETS),
  /** Settled: what the deposit paid for guarantees whose charge failed, in this window. */
  usedWei: z.string(),
  /** Held by guarantees signed and not settled yet, at their worst case. */
  reservedWei: z.string(),
  windowStart: z.string(),
  /** Absent for a cap that never resets. */
  windowEnd: z.string().optional(),
});

/** The dApp's setting as stored, and its cap's usage (null without a cap). */
const guaranteesView = z.object({
  dappId: z.string(),
  tokenGuarantees: tokenGuaranteesSchema,
  usage: usageView.nullable(),
});

const iso = (ms: number) => new Date(ms).toISOString();

/** A dApp's setting and its cap's current window, as the admin API and the CLI show them. */
export async function tokenGuaranteesView(
  policies: Pick<PolicyService, 'guaranteeUsage'>,
  d: Pick<DappRecord, 'id' | 'tokenGuarantees'>,
): Promise<z.infer<typeof guaranteesView>> {
  const tokenGuarantees = d.tokenGuarantees ?? NO_TOKEN_GUARANTEES;
  const cap = tokenGuarantees.cap;
  const u = cap === undefined ? null : await policies.guaranteeUsage(d.id, cap);
  return {
    dappId: d.id,
    tokenGuarantees,
    usage:
      u === null
        ? null
        : {
            limitWei: u.limitWei,
            resets: u.resets,
            usedWei: u.usedWei,
            reservedWei: u.reservedWei,
            windowStart: iso(u.windowStart),
            ...(u.windowEnd === undefined ? {} : { windowEnd: iso(u.windowEnd) }),
          },
  };
}

/**
 * GET/PUT /api/admin/dapps/:dappId/token-guarantees (docs/guides/token-mode.md, "The dApp's guarantee"): whether
 * Patron may sign the token mode's mode 2 for the dApp (off by default; enabling needs a cap), and what the cap's
 * current window holds. Another account's dApp is 404, as a missing one.
 */
export function adminTokenGuaranteeRoutes(deps: {
  readonly accounts: AccountService;
  readonly policies: PolicyService;
}): RouteDef[] {
  const view = (d: Pick<DappRecord, 'id' | 'tokenGuarantees'>) => tokenGuaranteesView(deps.policies, d);
  return [
    route({
      method: 'GET',
      path: '/api/admin/dapps/:dappId/token-guarantees',
      auth: 'account',
      operationId: 'getDappTokenGuarantees',
      summary:
        "The dApp's token guarantees: whether mode 2 (a batched approval, paid by the deposit if its charge fails) is signed, its cap and the cap's usage",
      tag: ADMIN_TAG,
      params: dappParams,
      answer: { envelope: 'Token guarantees fetched', data: guaranteesView },
      errors: DAPP_NOT_FOUND,
      handler: async ({ account, params }) =>
        view(await deps.accounts.getDapp({ accountId: account.id, dappId: params.dappId })),
    }),
    route({
      method: 'PUT',
      path: '/api/admin/dapps/:dappId/token-guarantees',
      auth: 'account',
      operationId: 'setDappTokenGuarantees',
      summary: 'Replace the dApp\'s token guarantees ({"enabled":false} turns them off; enabling needs a cap)',
      tag: ADMIN_TAG,
      params: dappParams,
      body: tokenGuaranteesSchema,
      example: { enabled: true, cap: { limitWei: '50000000000000000', resets: 'daily' } },
      answer: { envelope: 'Token guarantees set', data: guaranteesView },
      errors: {
        '400':
          'enabled missing, enabled without a cap, limitWei not a positive wei amount, resets unknown, or an unknown key',
        ...DAPP_NOT_FOUND,
      },
      audit: {
        action: 'dapp.tokenGuarantees.set',
        before: async ({ account, params }) =>
          view(await deps.accounts.getDapp({ accountId: account.id, dappId: params.dappId })),
      },
      handler: async ({ account, params, body }) => {
        const tokenGuarantees = await deps.accounts.setDappTokenGuarantees({
          accountId: account.id,
          dappId: params.dappId,
          guarantees: body,
        });
        return view({ id: params.dappId, tokenGuarantees });
      },
    }),
  ];
}
