import { z } from 'zod';
import { closedObject } from './closedObject.js';

/**
 * Signing bounds: what Patron refuses to sign, whatever the dApp's webhook says (docs/guides/signing-bounds.md, "Signing bounds").
 * A public API key can ask for a signature over any op; an op whose fees or gas are inflated, submitted by the
 * requester as its own bundler, pays the excess out of the paymaster's deposit to the requester. The bounds
 * are always on. They come from the deployment (environment), may be overridden per chain (PATRON_CHAINS) and
 * per dApp (the operator's `patron dapp limits`), most specific first.
 *
 * Multipliers are kept in parts per million so that every comparison is exact bigint arithmetic.
 */
export interface SigningBounds {
  /** maxFeePerGas ≤ baseFee × this / 1e6 + the tip cap. */
  readonly baseFeeMultiplierPpm: bigint;
  /** Tip cap = max(the chain's suggested tip × this / 1e6, minTipCapWei). */
  readonly tipMultiplierPpm: bigint;
  /** The tip cap's floor, in wei per gas: chains whose nodes suggest ~0 still allow a small tip. */
  readonly minTipCapWei: bigint;
  readonly maxCallGasLimit: bigint;
  readonly maxVerificationGasLimit: bigint;
  readonly maxPreVerificationGas: bigint;
  /**
   * preVerificationGas is paid in full and never burnt, so it is bounded by what the op needs: Patron's figure for the
   * op's size (the version's calldata formula, plus l1DataGasPerByte per byte) × this / 1e6 + preVerificationGasSlack.
   */
  readonly preVerificationGasMultiplierPpm: bigint;
  /** Gas over the multiplied figure (an account signature longer than the one Patron priced, another formula). */
  readonly preVerificationGasSlack: bigint;
  /** Gas per byte of the op's encoding that the chain charges for its L1 data (an L2; 0 on an L1). */
  readonly l1DataGasPerByte: bigint;
  /**
   * The most unused-gas penalty an op may pay (EntryPoint v0.7+: 10 % of the unused call and postOp gas, paid to
   * the bundler, never burnt), in gas, at the op's limits or caps.
   */
  readonly maxUnusedGasPenalty: bigint;
  /** The op's worst-case cost to the paymaster (the EntryPoint's prefund formula × maxFeePerGas), in wei. */
  readonly maxOpCostWei: bigint;
  /**
   * The share of each policy cap (percent, 1-100) that the signatures of one caller may hold while the chain has not
   * included them: a client IP (an IPv6 /48), or the person a sponsorship token names. At least one op always fits
   * (a cap with room for it admits it whoever holds the rest). 100: no bound (docs/guides/policies.md, "Held budgets").
   */
  readonly holdSharePerCallerPercent: number;
  /** The same share for one sender (the op's account). */
  readonly holdSharePerSenderPercent: number;
}

export const DEFAULT_SIGNING_BOUNDS: SigningBounds = Object.freeze({
  // 3 × the base fee covers ~9 full blocks of base-fee growth (12.5 % each) between signing and inclusion, and
  // the multiples clients use (viem 1.2 ×, alto's fast ~2.3 ×). What a bundler is paid per gas is
  // min(maxFeePerGas, baseFee + tip), so the tip cap is what bounds an attacker-bundler's margin.
  baseFeeMultiplierPpm: 3_000_000n,
  tipMultiplierPpm: 3_000_000n,
  minTipCapWei: 100_000_000n, // 0.1 gwei
  maxCallGasLimit: 10_000_000n,
  maxVerificationGasLimit: 3_000_000n,
  maxPreVerificationGas: 1_000_000n,
  // What the SDK flows need over Patron's own figure (test/e2e.*, docs/guides/signing-bounds.md, "Signing bounds"): alto estimates 10 % over
  // its formula, which Patron's figure is at least (over the op as the client had it estimated: gasBounds.ts); every
  // flow tested passes at × 1.1 and fails below (on v0.6 Patron's figure is alto's, so × 1.1 is its estimate exactly).
  preVerificationGasMultiplierPpm: 1_100_000n,
  preVerificationGasSlack: 0n,
  l1DataGasPerByte: 0n,
  // A callGasLimit of 1,000,000 on v0.7-v0.9 (10 % of it); v0.6 has no penalty.
  maxUnusedGasPenalty: 100_000n,
  maxOpCostWei: 50_000_000_000_000_000n, // 0.05 native coin; set it per chain where the coin is cheap
  // A caller (or sender) holding unsubmitted signatures keeps at most a tenth of a cap from everyone else, so filling
  // a cap with signatures never submitted takes ten callers at least (issue 31, test/policies.holds.attack.test.ts).
  holdSharePerCallerPercent: 10,
  holdSharePerSenderPercent: 10,
});

const MAX_MULTIPLIER_PPM = 1000n * 1_000_000n;
const MAX_WEI = (1n << 128n) - 1n;

/** A multiplier as a number or decimal string ("2.5"), at most 6 decimals, from 1 to 1000, as parts per million. */
const multiplier = (name: string) =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const text = typeof v === 'number' ? String(v) : v.trim();
    const m = /^(\d{1,4})(?:\.(\d{1,6}))?$/.exec(text);
    const ppm = m === null ? undefined : BigInt(m[1] ?? '0') * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0'));
    if (ppm === undefined || ppm < 1_000_000n || ppm > MAX_MULTIPLIER_PPM) {
      ctx.addIssue({ code: 'custom', message: `${name} must be a number from 1 to 1000 (at most 6 decimals)` });
      return z.NEVER;
    }
    return ppm;
  });

/** A whole amount (wei or gas) as a decimal string or a safe integer. */
const amount = (name: string, min: bigint) =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const text = typeof v === 'number' ? (Number.isSafeInteger(v) ? String(v) : '') : v.trim();
    const n = /^\d{1,39}$/.test(text) ? BigInt(text) : undefined;
    if (n === undefined || n < min || n > MAX_WEI) {
      ctx.addIssue({ code: 'custom', message: `${name} must be a whole number of at least ${min} (a decimal string)` });
      return z.NEVER;
    }
    return n;
  });

/** A whole percentage from 1 to 100. */
const percent = (name: string) =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const text = typeof v === 'number' ? String(v) : v.trim();
    const n = /^\d{1,3}$/.test(text) ? Number(text) : Number.NaN;
    if (!(n >= 1 && n <= 100)) {
      ctx.addIssue({ code: 'custom', message: `${name} must be a whole percentage from 1 to 100` });
      return z.NEVER;
    }
    return n;
  });

/** The bounds an override may set, each optional (PATRON_CHAINS[i].bounds, a dApp's limits.bounds). */
export const boundsOverrideSchema = closedObject(
  {
    baseFeeMultiplier: multiplier('baseFeeMultiplier').optional(),
    tipMultiplier: multiplier('tipMultiplier').optional(),
    minTipCapWei: amount('minTipCapWei', 0n).optional(),
    maxCallGasLimit: amount('maxCallGasLimit', 1n).optional(),
    maxVerificationGasLimit: amount('maxVerificationGasLimit', 1n).optional(),
    maxPreVerificationGas: amount('maxPreVerificationGas', 1n).optional(),
    preVerificationGasMultiplier: multiplier('preVerificationGasMultiplier').optional(),
    preVerificationGasSlack: amount('preVerificationGasSlack', 0n).optional(),
    l1DataGasPerByte: amount('l1DataGasPerByte', 0n).optional(),
    maxUnusedGasPenalty: amount('maxUnusedGasPenalty', 0n).optional(),
    maxOpCostWei: amount('maxOpCostWei', 1n).optional(),
    holdSharePerCallerPercent: percent('holdSharePerCallerPercent').optional(),
    holdSharePerSenderPercent: percent('holdSharePerSenderPercent').optional(),
  },
  { notObject: 'bounds must be an object' },
);
/** The keys a bounds override may set, for messages that say a key belongs under `bounds`. */
export const BOUNDS_KEYS = Object.keys(boundsOverrideSchema.shape) as readonly (keyof BoundsOverrideInput)[];
export type BoundsOverride = z.output<typeof boundsOverrideSchema>;
export type BoundsOverrideInput = z.input<typeof boundsOverrideSchema>;

/** The bounds with an override applied: each field the override sets replaces the base's. */
export function applyBoundsOverride(base: SigningBounds, o: BoundsOverride | undefined): SigningBounds {
  if (o === undefined) return base;
  return {
    baseFeeMultiplierPpm: o.baseFeeMultiplier ?? base.baseFeeMultiplierPpm,
    tipMultiplierPpm: o.tipMultiplier ?? base.tipMultiplierPpm,
    minTipCapWei: o.minTipCapWei ?? base.minTipCapWei,
    maxCallGasLimit: o.maxCallGasLimit ?? base.maxCallGasLimit,
    maxVerificationGasLimit: o.maxVerificationGasLimit ?? base.maxVerificationGasLimit,
    maxPreVerificationGas: o.maxPreVerificationGas ?? base.maxPreVerificationGas,
    preVerificationGasMultiplierPpm: o.preVerificationGasMultiplier ?? base.preVerificationGasMultiplierPpm,
    preVerificationGasSlack: o.preVerificationGasSlack ?? base.preVerificationGasSlack,
    l1DataGasPerByte: o.l1DataGasPerByte ?? base.l1DataGasPerByte,
    maxUnusedGasPenalty: o.maxUnusedGasPenalty ?? base.maxUnusedGasPenalty,
    maxOpCostWei: o.maxOpCostWei ?? base.maxOpCostWei,
    holdSharePerCallerPercent: o.holdSharePerCallerPercent ?? base.holdSharePerCallerPercent,
    holdSharePerSenderPercent: o.holdSharePerSenderPercent ?? base.holdSharePerSenderPercent,
  };
}

/** The environment variables of the deployment-wide bounds, and the override field each sets. */
const ENV_TO_FIELD: Record<string, keyof BoundsOverrideInput> = {
  PATRON_BOUND_BASE_FEE_MULTIPLIER: 'baseFeeMultiplier',
  PATRON_BOUND_TIP_MULTIPLIER: 'tipMultiplier',
  PATRON_BOUND_MIN_TIP_CAP_WEI: 'minTipCapWei',
  PATRON_BOUND_MAX_CALL_GAS: 'maxCallGasLimit',
  PATRON_BOUND_MAX_VERIFICATION_GAS: 'maxVerificationGasLimit',
  PATRON_BOUND_MAX_PRE_VERIFICATION_GAS: 'maxPreVerificationGas',
  PATRON_BOUND_PRE_VERIFICATION_GAS_MULTIPLIER: 'preVerificationGasMultiplier',
  PATRON_BOUND_PRE_VERIFICATION_GAS_SLACK: 'preVerificationGasSlack',
  PATRON_BOUND_L1_DATA_GAS_PER_BYTE: 'l1DataGasPerByte',
  PATRON_BOUND_MAX_UNUSED_GAS_PENALTY: 'maxUnusedGasPenalty',
  PATRON_BOUND_MAX_OP_COST_WEI: 'maxOpCostWei',
  PATRON_BOUND_HOLD_SHARE_PER_CALLER_PERCENT: 'holdSharePerCallerPercent',
  PATRON_BOUND_HOLD_SHARE_PER_SENDER_PERCENT: 'holdSharePerSenderPercent',
};

/**
 * The deployment's bounds from the environment, or the problems found (each naming its variable). The values
 * are read through the same schema as the per-chain and per-dApp overrides, so the three cannot disagree.
 */
export function boundsFromEnv(env: Readonly<Record<string, string | undefined>>): {
  bounds: SigningBounds;
  problems: string[];
} {
  const input: Record<string, string> = {};
  const fieldToEnv = new Map<string, string>();
  for (const [envName, field] of Object.entries(ENV_TO_FIELD)) {
    const v = env[envName];
    if (v !== undefined && v.trim() !== '') {
      input[field] = v.trim();
      fieldToEnv.set(field, envName);
    }
  }
  const parsed = boundsOverrideSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const field = String(i.path[0] ?? '');
      return `${fieldToEnv.get(field) ?? field}: ${i.message}`;
    });
    return { bounds: DEFAULT_SIGNING_BOUNDS, problems };
  }
  return { bounds: applyBoundsOverride(DEFAULT_SIGNING_BOUNDS, parsed.data), problems: [] };
}
