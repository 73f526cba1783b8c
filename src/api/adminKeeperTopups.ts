import { z } from 'zod';
import type { DepositTopup, DepositTopupRepository } from '../store/ledger/depositTopupRepository.js';
import { DASHBOARD_TAG } from './adminSession.js';
import { pageLimit } from './pageQuery.js';
import { type RouteDef, route } from './route.js';

/**
 * `GET /api/admin/keeper/topups`: the deposit keeper's ledger (docs/guides/operations.md, "Deposit keeper"), newest
 * first: each top-up it sent, dry-ran or proposed to the owner's Safe, with its state. The paymasters and their
 * deposits are the operator's, shared by every dApp, so every signed-in account sees the same answer (as
 * /api/admin/paymaster-status).
 */
const topupView = z.object({
  id: z.string(),
  chainId: z.number().int(),
  paymaster: z.string(),
  entryPoint: z.string(),
  amountWei: z.string(),
  funder: z.string().nullable().describe('The funding key; the owner (the Safe) for a proposal'),
  mode: z.enum(['sent', 'dry_run', 'proposed']),
  txHash: z.string().nullable(),
  state: z.enum(['pending', 'confirmed', 'failed']),
  reason: z.string(),
  depositWei: z.string(),
  markWei: z.string(),
  targetWei: z.string(),
  proposal: z.unknown().describe('Mode `proposed`: the Safe transaction and its Transaction Builder batch; else null'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const keeperTopupsQuery = z.object({
  chainId: z.coerce.number().int().positive().optional(),
  paymaster: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'paymaster must be an address' })
    .optional(),
  limit: pageLimit,
  before: z.iso.datetime({ error: 'before must be an ISO 8601 time' }).optional(),
});

export const toTopupView = (t: DepositTopup): z.infer<typeof topupView> => ({
  id: t.id,
  chainId: t.chainId,
  paymaster: t.paymaster,
  entryPoint: t.entryPoint,
  amountWei: t.amountWei.toString(),
  funder: t.funder ?? null,
  mode: t.mode,
  txHash: t.txHash ?? null,
  state: t.state,
  reason: t.reason,
  depositWei: t.depositWei.toString(),
  markWei: t.markWei.toString(),
  targetWei: t.targetWei.toString(),
  proposal: t.proposal ?? null,
  createdAt: new Date(t.createdAt).toISOString(),
  updatedAt: new Date(t.updatedAt).toISOString(),
});

export function adminKeeperTopupRoutes(deps: {
  readonly store: { readonly depositTopups: Pick<DepositTopupRepository, 'list'> };
}): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/api/admin/keeper/topups',
      auth: 'account',
      operationId: 'listKeeperTopups',
      summary:
        "The deposit keeper's top-ups (sent, dry run, proposed), newest first, optionally of one chain or paymaster (the same for everyone)",
      tag: DASHBOARD_TAG,
      query: keeperTopupsQuery,
      answer: { envelope: 'Keeper top-ups fetched', data: z.object({ topups: z.array(topupView) }) },
      handler: async ({ query: q }) => {
        const rows = await deps.store.depositTopups.list({
          chainId: q.chainId,
          paymaster: q.paymaster,
          before: q.before === undefined ? undefined : Date.parse(q.before),
          limit: q.limit,
        });
        return { topups: rows.map(toTopupView) };
      },
    }),
  ];
}
