import { z } from 'zod';
import { BOUNDS_KEYS, type BoundsOverride, boundsOverrideSchema } from '../config/boundsSettings.js';
import { closedObject, issueText, movedUnder } from '../config/closedObject.js';
import { dappRateLimitsOverrideSchema } from '../config/rateLimitSettings.js';

/**
 * What the operator may set for one dApp (`patron dapp limits`), stored as JSON in `dapps.limits`: overrides
 * of the signing bounds for every chain (`bounds`) and for one chain (`chains["8453"].bounds`, which wins),
 * and of the dApp's rate limits (`rateLimits`: calls per key, simulations and webhook calls per key and IP).
 * Only the operator sets these: a dApp owner holding an auth token cannot loosen what Patron signs.
 */
const chainKey = z.string().regex(/^[1-9]\d{0,14}$/, { error: 'chains keys must be chain ids' });

const RATE_LIMIT_GROUPS = Object.keys(dappRateLimitsOverrideSchema.shape);

/**
 * A key one level off: a signing bound belongs under `bounds`, a rate-limit group under `rateLimits`, a chain id
 * under `chains` (the mistake the operator makes most: `{"maxOpCostWei": "1"}` for `{"bounds": {...}}`).
 */
function misplacedLimitsKey(key: string, input: Readonly<Record<string, unknown>>): string | undefined {
  const value = input[key];
  if ((BOUNDS_KEYS as readonly string[]).includes(key)) return movedUnder({ parent: 'bounds', key, value });
  if (RATE_LIMIT_GROUPS.includes(key)) return movedUnder({ parent: 'rateLimits', key, value });
  if (/^[1-9]\d{0,14}$/.test(key)) return movedUnder({ parent: 'chains', key, value });
  return undefined;
}

const chainLimits = closedObject(
  { bounds: boundsOverrideSchema.optional() },
  {
    notObject: 'each chains entry must be an object {"bounds": {...}}',
    misplaced: (key, input) =>
      (BOUNDS_KEYS as readonly string[]).includes(key)
        ? movedUnder({ parent: 'bounds', key, value: input[key] })
        : undefined,
  },
);

export const dappLimitsSchema = closedObject(
  {
    bounds: boundsOverrideSchema.optional(),
    rateLimits: dappRateLimitsOverrideSchema.optional(),
    chains: z.record(chainKey, chainLimits, { error: 'chains must be an object keyed by chain id' }).optional(),
  },
  {
    notObject: 'limits must be a JSON object such as {"bounds":{"maxOpCostWei":"10000000000000000"}}',
    misplaced: misplacedLimitsKey,
  },
);

/**
 * A dApp's limits from the operator's JSON, or the first problem as `limits.chains.8453.bounds: …` naming the key
 * and the fix (a trailing field is named by the message itself).
 */
export function parseDappLimits(input: unknown): { limits: DappLimits } | { problem: string } {
  const r = dappLimitsSchema.safeParse(input);
  if (r.success) return { limits: r.data };
  const issue = r.error.issues[0];
  return {
    problem: issue === undefined ? 'limits are invalid' : issueText({ root: 'limits', issue, dropField: true }),
  };
}

export type DappLimits = z.output<typeof dappLimitsSchema>;
export const NO_DAPP_LIMITS: DappLimits = Object.freeze({});

/** The dApp's bounds override for a chain: the chain's own fields over the dApp-wide ones. */
export function dappBoundsFor(limits: DappLimits, chainId: number): BoundsOverride | undefined {
  const chain = limits.chains?.[String(chainId)]?.bounds;
  if (chain === undefined) return limits.bounds;
  return limits.bounds === undefined ? chain : { ...limits.bounds, ...chain };
}

const PPM = 1_000_000n;
const multiplierText = (ppm: bigint): string => {
  const whole = ppm / PPM;
  const frac = (ppm % PPM).toString().padStart(6, '0').replace(/0+$/, '');
  return frac === '' ? whole.toString() : `${whole}.${frac}`;
};

function boundsToJson(b: BoundsOverride): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(b)) {
    // Percentages are numbers, every other bound a bigint.
    if (typeof v === 'number') out[k] = String(v);
    if (typeof v !== 'bigint') continue;
    out[k] = k.endsWith('Multiplier') ? multiplierText(v) : v.toString();
  }
  return out;
}

/** The canonical JSON form of a dApp's limits (what is stored and shown): numbers as decimal strings. */
export function dappLimitsToJson(limits: DappLimits): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (limits.bounds !== undefined) out.bounds = boundsToJson(limits.bounds);
  if (limits.rateLimits !== undefined) out.rateLimits = limits.rateLimits;
  if (limits.chains !== undefined) {
    out.chains = Object.fromEntries(
      Object.entries(limits.chains).map(([id, c]) => [
        id,
        c.bounds === undefined ? {} : { bounds: boundsToJson(c.bounds) },
      ]),
    );
  }
  return out;
}
