import { z } from 'zod';
import { closedObject } from '../config/closedObject.js';

/**
 * A dApp's token guarantees (docs/guides/token-mode.md, "The dApp's guarantee"): whether Patron may sign the token
 * mode's mode 2 for it (an op that batches its approval, whose charge is collected after it runs and can fail, and
 * then the paymaster's deposit pays its gas), and the cap on what those guarantees may cost per window. The owner's
 * document, stored as JSON in `dapps.token_guarantees` (migration 0023) and kept parsed in the cached dApp record,
 * so the token path reads it with no query. Off by default for every dApp: `'{}'` is `{enabled: false}`.
 *
 * In config/ beside callerRestrictions.ts and sponsorshipTokenSettings.ts: the store parses the column, and the
 * token mode (paymaster/token/) and the spend ledger's cap (policies/guaranteeCap.ts) read it.
 */

/** The windows a guarantee cap counts in: a policy cap's `resets` (policies/capWindows.ts, calendar-aligned in UTC). */
export const GUARANTEE_CAP_RESETS = ['hourly', 'daily', 'weekly', 'monthly', 'never'] as const;
export type GuaranteeCapResets = (typeof GUARANTEE_CAP_RESETS)[number];

/** A positive wei amount as a decimal string, up to uint256's 78 digits. */
const positiveWei = z
  .string({ error: 'limitWei must be a decimal string of wei, e.g. "50000000000000000" (0.05 ETH)' })
  .regex(/^[1-9]\d{0,77}$/, {
    error: 'limitWei must be a positive whole number of wei as a decimal string, e.g. "50000000000000000" (0.05 ETH)',
  });

const capSchema = closedObject(
  {
    /** The most the guarantees signed in one window may commit of the deposit, in wei (worst cases, then costs). */
    limitWei: positiveWei,
    resets: z.enum(GUARANTEE_CAP_RESETS, {
      error: `resets must be one of ${GUARANTEE_CAP_RESETS.join(', ')}`,
    }),
  },
  { notObject: 'cap must be an object such as {"limitWei":"50000000000000000","resets":"daily"}' },
);

/** What enabling without a cap is told: the whole document to send instead. */
export const CAP_REQUIRED =
  'enabling token guarantees requires a cap (no unbounded guarantee): send {"enabled":true,"cap":{"limitWei":"50000000000000000","resets":"daily"}}';

/**
 * What the owner sets (the admin API's body, the CLI's flags): the whole document, which replaces the stored one. A
 * cap may stay stored while guarantees are off (turned on again, it applies as it was).
 */
export const tokenGuaranteesSchema = closedObject(
  {
    enabled: z.boolean({ error: 'enabled must be true or false' }),
    cap: capSchema.optional(),
  },
  { notObject: 'token guarantees must be an object such as {"enabled":false}' },
).superRefine((g, ctx) => {
  if (g.enabled && g.cap === undefined) ctx.addIssue({ code: 'custom', path: ['cap'], message: CAP_REQUIRED });
});

export type TokenGuarantees = z.output<typeof tokenGuaranteesSchema>;
export type GuaranteeCapSetting = NonNullable<TokenGuarantees['cap']>;

/** Every dApp's setting until its owner changes it, existing ones included (the column's default). */
export const NO_TOKEN_GUARANTEES: TokenGuarantees = Object.freeze({ enabled: false });

/** The stored JSON column: '{}' (the default, by far the most common) is off, with no parsing. */
export function tokenGuaranteesColumn(text: string): TokenGuarantees {
  if (text === '{}') return NO_TOKEN_GUARANTEES;
  return Object.freeze(tokenGuaranteesSchema.parse(JSON.parse(text)));
}

/** The column's text: off with no cap is stored as the default '{}'. */
export function tokenGuaranteesToColumn(g: TokenGuarantees): string {
  return !g.enabled && g.cap === undefined
    ? '{}'
    : JSON.stringify({ enabled: g.enabled, ...(g.cap && { cap: g.cap }) });
}
