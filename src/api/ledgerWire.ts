import { z } from 'zod';
import { microsToUsd } from '../policies/policySchema.js';
import {
  LEDGER_GROUPS,
  LEDGER_STATUSES,
  type LedgerFilter,
  type LedgerGroup,
  type LedgerGroupRow,
  type LedgerItem,
  type LedgerKey,
} from '../store/ledger/ledgerQueryRepository.js';

/**
 * The itemized ledger on the wire (docs/guides/ledger.md), shared by the admin API (adminLedger.ts), its CSV export
 * (ledgerCsv.ts) and the CLI (cli/ledgerCommands.ts), so all three parse the same filters with the same messages
 * and show the same fields. Wei and micro-USD are bigints inside and decimal strings here.
 */
const time = (name: string) =>
  z
    .string()
    .refine((s) => /^\d{4}-\d{2}-\d{2}/.test(s) && Number.isFinite(Date.parse(s)), {
      error: `${name} must be an ISO 8601 date or time (2026-11-01 or 2026-11-01T12:00:00Z)`,
    })
    .transform((s) => Date.parse(s));

/** The filters every ledger route takes. */
export const ledgerFilterQuery = z.object({
  from: time('from').optional(),
  to: time('to').optional(),
  policyId: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/, { error: 'policyId must be a policy id' })
    .optional(),
  sender: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'sender must be an address (0x and 40 hex digits)' })
    .transform((s) => s.toLowerCase())
    .optional(),
  user: z.string().min(1).max(256, { error: 'user must be at most 256 characters' }).optional(),
  status: z.enum(LEDGER_STATUSES, { error: `status must be one of ${LEDGER_STATUSES.join(', ')}` }).optional(),
  chainId: z.coerce
    .number({ error: 'chainId must be a positive integer' })
    .int({ error: 'chainId must be a positive integer' })
    .positive({ error: 'chainId must be a positive integer' })
    .optional(),
});

export const MAX_LEDGER_PAGE = 500;
const LIMIT_MESSAGE = `limit must be an integer from 1 to ${MAX_LEDGER_PAGE}`;

export const ledgerListQuery = ledgerFilterQuery.extend({
  cursor: z.string().max(200).optional(),
  limit: z.coerce
    .number({ error: LIMIT_MESSAGE })
    .int({ error: LIMIT_MESSAGE })
    .min(1, { error: LIMIT_MESSAGE })
    .max(MAX_LEDGER_PAGE, { error: LIMIT_MESSAGE })
    .default(100),
});

const GROUP_MESSAGE = `groupBy must be one or two of ${LEDGER_GROUPS.join(', ')}, separated by a comma (day,policy)`;
export const ledgerStatsQuery = ledgerFilterQuery.extend({
  groupBy: z
    .string()
    .default('day')
    .transform((s, ctx) => {
      const dims = s.split(',').map((d) => d.trim());
      const ok =
        dims.length <= 2 &&
        new Set(dims).size === dims.length &&
        dims.every((d): d is LedgerGroup => (LEDGER_GROUPS as readonly string[]).includes(d));
      if (!ok) {
        ctx.addIssue({ code: 'custom', message: GROUP_MESSAGE });
        return z.NEVER;
      }
      return dims as LedgerGroup[];
    }),
});

export const filterOf = (dappId: string, q: z.output<typeof ledgerFilterQuery>): LedgerFilter => ({ dappId, ...q });

/** The cursor is opaque to callers: the last row's place, base64url. */
export const encodeCursor = (k: LedgerKey): string => Buffer.from(`${k.createdAt}:${k.id}`).toString('base64url');

export function decodeCursor(cursor: string): LedgerKey | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^(\d{1,15}):(.{1,200})$/s.exec(text);
  if (m === null || m[1] === undefined || m[2] === undefined) return undefined;
  return { createdAt: Number(m[1]), id: m[2] };
}

export const ledgerItemView = z.object({
  id: z.string(),
  chainId: z.number().int(),
  paymaster: z.string().nullable(),
  sender: z.string().nullable(),
  user: z.string().nullable(),
  policyIds: z.array(z.string()).nullable(),
  mode: z.enum(['sponsored', 'token']),
  status: z.enum(LEDGER_STATUSES),
  reservedWei: z.string().nullable().meta({ description: 'The worst case signed, in wei' }),
  charges: z.array(z.object({ unit: z.string(), amount: z.string() })),
  actualWei: z.string().nullable().meta({ description: 'What the op cost the paymaster deposit, once included' }),
  actualUsd: z.string().nullable().meta({ description: 'actualWei in USD at the price of settlement time' }),
  userOpHash: z.string().nullable(),
  txHash: z.string().nullable(),
  blockNumber: z.number().int().nullable(),
  createdAt: z.string(),
  closedAt: z.string().nullable(),
  expiresAt: z.string(),
});
export type LedgerItemView = z.infer<typeof ledgerItemView>;

export const ledgerPage = z.object({ items: z.array(ledgerItemView), nextCursor: z.string().nullable() });

const totalsView = {
  count: z.number().int(),
  reservedWei: z.string(),
  settledWei: z.string(),
  settledUsd: z.string().nullable().meta({
    description:
      'settledWei in USD, of the settled ops that had a price; null when settled ops had none (no price source for the chain), never a 0 that stands for unknown',
  }),
  settledWithoutPrice: z.number().int().meta({ description: 'Settled ops with no USD value (no fresh price)' }),
};
export const ledgerStatsView = z.object({
  groupBy: z.array(z.enum(LEDGER_GROUPS)),
  groups: z.array(
    z.object({
      day: z.string().optional(),
      policyId: z.string().nullable().optional(),
      user: z.string().nullable().optional(),
      chainId: z.number().int().optional(),
      ...totalsView,
    }),
  ),
  total: z.object(totalsView),
});

const iso = (ms: number) => new Date(ms).toISOString();

export function toLedgerItemView(i: LedgerItem): LedgerItemView {
  return {
    id: i.id,
    chainId: i.chainId,
    paymaster: i.paymaster,
    sender: i.sender,
    user: i.user,
    policyIds: i.policyIds === null ? null : [...i.policyIds],
    mode: i.mode,
    status: i.status,
    reservedWei: i.reservedWei?.toString() ?? null,
    charges: i.charges.map((c) => ({
      unit: c.unit,
      amount: c.unit === 'usd' ? microsToUsd(BigInt(c.amount)) : c.amount,
    })),
    actualWei: i.actualWei?.toString() ?? null,
    actualUsd: i.actualUsdMicros === null ? null : microsToUsd(i.actualUsdMicros),
    userOpHash: i.userOpHash,
    txHash: i.txHash,
    blockNumber: i.block,
    createdAt: iso(i.createdAt),
    closedAt: i.closedAt === null ? null : iso(i.closedAt),
    expiresAt: iso(i.expiresAt),
  };
}

/**
 * Settled spend with no price at all is unknown in USD, not $0 (the dashboard showed "$0" for a chain without a price
 * source); a group with nothing settled did spend $0 at any price.
 */
const settledUsd = (g: LedgerGroupRow): string | null =>
  g.settledUsdMicros === null && g.settledWithoutPrice > 0 ? null : microsToUsd(g.settledUsdMicros ?? 0n);

const totals = (g: LedgerGroupRow) => ({
  count: g.count,
  reservedWei: g.reservedWei.toString(),
  settledWei: g.settledWei.toString(),
  settledUsd: settledUsd(g),
  settledWithoutPrice: g.settledWithoutPrice,
});

/**
 * The groups, and the total over the filter (taken from the groups of the first dimension unless it is `policy`:
 * an op of two policies is in two groups, so that total comes from a query of its own, `overall`).
 */
export function toLedgerStatsView(args: {
  readonly groupBy: readonly LedgerGroup[];
  readonly groups: readonly LedgerGroupRow[];
  readonly overall: LedgerGroupRow | undefined;
}): z.infer<typeof ledgerStatsView> {
  const zero = { count: 0, reservedWei: 0n, settledWei: 0n, settledUsdMicros: null, settledWithoutPrice: 0 };
  return {
    groupBy: [...args.groupBy],
    groups: args.groups.map((g) => ({
      ...(g.day === undefined ? {} : { day: g.day }),
      ...(g.policyId === undefined ? {} : { policyId: g.policyId }),
      ...(g.user === undefined ? {} : { user: g.user }),
      ...(g.chainId === undefined ? {} : { chainId: g.chainId }),
      ...totals(g),
    })),
    total: totals(args.overall ?? zero),
  };
}
