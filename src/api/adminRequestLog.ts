import { z } from 'zod';
import { REQUEST_OUTCOMES, type RequestOutcome, type StoredRequestLogEntry } from '../store/records.js';
import type { Store } from '../store/store.js';
import { DASHBOARD_TAG } from './adminSession.js';
import { pageCursor, pageLimit, TIME_ID_CURSOR } from './pageQuery.js';
import { type RouteDef, route } from './route.js';

/**
 * The request log of the signed-in account's dApps: `GET /api/admin/request-log` (newest first, filtered by
 * dApp, outcome and sender, paged with `before`), and `GET /api/admin/request-log/stats` (counts per outcome
 * over time, for the chart). Every query is scoped to the account; another account's dApp id finds nothing.
 */
const outcomeSchema = z.enum(REQUEST_OUTCOMES as [RequestOutcome, ...RequestOutcome[]], {
  error: `outcome must be one of ${REQUEST_OUTCOMES.join(', ')}`,
});
const dappIdSchema = z.string().max(64, { error: 'dappId must be a dApp id' });

export const requestLogQuery = z.object({
  dappId: dappIdSchema.optional(),
  outcome: outcomeSchema.optional(),
  sender: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'sender must be an address (0x and 40 hex digits)' })
    .transform((s) => s.toLowerCase())
    .optional(),
  before: pageCursor(TIME_ID_CURSOR),
  limit: pageLimit,
});

const RANGES = {
  '1h': { spanMs: 3_600_000, bucketMs: 5 * 60_000 },
  '24h': { spanMs: 86_400_000, bucketMs: 3_600_000 },
  '7d': { spanMs: 7 * 86_400_000, bucketMs: 6 * 3_600_000 },
} as const;

export const requestLogStatsQuery = z.object({
  dappId: dappIdSchema.optional(),
  range: z.enum(['1h', '24h', '7d'], { error: 'range must be one of 1h, 24h, 7d' }).default('24h'),
});

export const requestLogEntryView = z.object({
  id: z.string(),
  at: z.string(),
  dappId: z.string(),
  chainId: z.number().int(),
  method: z.string(),
  mode: z.string().nullable(),
  sender: z.string().nullable(),
  outcome: outcomeSchema,
  errorCode: z.number().int().nullable(),
  reason: z.string().nullable(),
  webhook: z
    .object({ allowed: z.boolean(), reason: z.string().nullable(), latencyMs: z.number(), calls: z.number().int() })
    .nullable(),
  latencyMs: z.number(),
  /**
   * The policy decision (null when no policy was asked: no policy on the dApp, or the call ended before): what
   * was reserved per cap unit (wei, usd in micro-USD, ops; decimal strings), or the rule and policy that denied.
   * `guarantee`: a token-mode op signed in mode 2, whose charge the dApp guarantees (docs/guides/token-mode.md, "Paying gas in ERC-20");
   * such an op has a decision even when the dApp has no policy.
   */
  policy: z
    .object({
      decision: z.enum(['passed', 'denied']),
      rule: z.string().nullable(),
      policyId: z.string().nullable(),
      policyIds: z.array(z.string()),
      reserved: z.array(z.object({ unit: z.string(), amount: z.string() })),
      guarantee: z.boolean(),
    })
    .nullable(),
  /** A signed op's EntryPoint userOpHash. */
  userOpHash: z.string().nullable(),
  /** The op's actualGasCost in wei (decimal) once settlement saw it included; null until then. */
  actualCostWei: z.string().nullable(),
});

const round1 = (n: number) => Math.round(n * 10) / 10;

const toView = (e: StoredRequestLogEntry): z.infer<typeof requestLogEntryView> => ({
  id: e.id,
  at: new Date(e.at).toISOString(),
  dappId: e.dappId,
  chainId: e.chainId,
  method: e.method,
  mode: e.mode,
  sender: e.sender,
  outcome: e.outcome,
  errorCode: e.errorCode,
  reason: e.reason,
  webhook: e.webhook === null ? null : { ...e.webhook, latencyMs: round1(e.webhook.latencyMs) },
  latencyMs: round1(e.latencyMs),
  policy:
    e.policy === null
      ? null
      : {
          decision: e.policy.decision,
          rule: e.policy.rule ?? null,
          policyId: e.policy.policyId ?? null,
          policyIds: [...(e.policy.policyIds ?? [])],
          reserved: (e.policy.reserved ?? []).map((r) => ({ unit: r.unit, amount: r.amount })),
          guarantee: e.policy.guarantee === true,
        },
  userOpHash: e.userOpHash,
  actualCostWei: e.actualCostWei,
});

const requestLogPage = z.object({
  entries: z.array(requestLogEntryView),
  /** `before` of the next page; null on the last one. */
  nextCursor: z.string().nullable(),
});

// `satisfies`: an outcome added to RequestOutcome must be counted here too.
const outcomeCounts = {
  sponsored: z.number().int(),
  quoted: z.number().int(),
  denied: z.number().int(),
  error: z.number().int(),
} satisfies Record<RequestOutcome, z.ZodNumber>;

const requestLogStats = z.object({
  range: requestLogStatsQuery.shape.range,
  bucketMs: z.number().int(),
  // Every bucket of the range, empty ones included; one count per outcome.
  buckets: z.array(z.object({ start: z.string(), ...outcomeCounts })),
});

const QUERY_ERRORS = { '400': 'A query parameter is invalid; the message names it' };

export function adminRequestLogRoutes(deps: { store: Store; now: () => number }): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/api/admin/request-log',
      auth: 'account',
      operationId: 'listRequestLog',
      summary: "The account's paymaster requests, newest first; page with `before` = the last `nextCursor`",
      tag: DASHBOARD_TAG,
      query: requestLogQuery,
      answer: { envelope: 'Request log fetched', data: requestLogPage },
      errors: QUERY_ERRORS,
      handler: async ({ account, query: q }) => {
        const cursor = q.before?.split('_');
        const rows = await deps.store.requestLog.query({
          accountId: account.id,
          ...(q.dappId === undefined ? {} : { dappId: q.dappId }),
          ...(q.outcome === undefined ? {} : { outcome: q.outcome }),
          ...(q.sender === undefined ? {} : { sender: q.sender }),
          ...(cursor === undefined ? {} : { before: { at: Number(cursor[0]), id: cursor[1] ?? '' } }),
          limit: q.limit,
        });
        const last = rows.at(-1);
        return {
          entries: rows.map(toView),
          nextCursor: rows.length === q.limit && last !== undefined ? `${last.at}_${last.id}` : null,
        };
      },
    }),
    route({
      method: 'GET',
      path: '/api/admin/request-log/stats',
      auth: 'account',
      operationId: 'getRequestLogStats',
      summary: 'Counts per outcome per time bucket over the range, for the chart',
      tag: DASHBOARD_TAG,
      query: requestLogStatsQuery,
      answer: { envelope: 'Request log stats fetched', data: requestLogStats },
      errors: QUERY_ERRORS,
      handler: async ({ account, query: q }) => {
        const { spanMs, bucketMs } = RANGES[q.range];
        const end = Math.floor(deps.now() / bucketMs) * bucketMs + bucketMs;
        const since = end - spanMs;
        const rows = await deps.store.requestLog.buckets({
          accountId: account.id,
          ...(q.dappId === undefined ? {} : { dappId: q.dappId }),
          since,
          bucketMs,
        });
        // Every bucket of the range, empty ones included, so the chart's time axis is even.
        const buckets = new Map<number, Record<RequestOutcome, number>>();
        for (let t = since; t < end; t += bucketMs) buckets.set(t, { sponsored: 0, quoted: 0, denied: 0, error: 0 });
        for (const r of rows) {
          const b = buckets.get(r.start);
          if (b !== undefined) b[r.outcome] += r.count;
        }
        return {
          range: q.range,
          bucketMs,
          buckets: [...buckets].map(([t, counts]) => ({ start: new Date(t).toISOString(), ...counts })),
        };
      },
    }),
  ];
}
