import { type Address, getAddress, type Hex } from 'viem';
import { z } from 'zod';

/**
 * A sponsorship policy's rules, as the admin API, the CLI and the stored JSON column hold them. Every rule is
 * optional; a policy with none admits every request (the signing bounds still apply). Amounts are decimal
 * strings on the wire (wei and op counts are integers, USD has at most 6 decimals) and bigints inside: wei as
 * is, USD in micro-dollars, so that caps add up exactly.
 */
const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 20-byte 0x address')
  .transform((a): Address => getAddress(a));
const selector = z
  .string()
  .regex(/^0x[0-9a-fA-F]{8}$/, 'expected a 4-byte 0x selector')
  .transform((s): Hex => s.toLowerCase() as Hex);
const unixSeconds = z
  .number()
  .int()
  .min(0)
  .max(2 ** 40);
const integerString = z.string().regex(/^(0|[1-9]\d{0,77})$/, 'expected a non-negative integer as a decimal string');
const usdString = z
  .string()
  .regex(/^(0|[1-9]\d{0,11})(\.\d{1,6})?$/, 'expected USD as a decimal string with at most 6 decimals');

/** Micro-dollars as USD with six decimals (1,500,000n → "1.500000"): usdToMicros's inverse. */
export function microsToUsd(micros: bigint): string {
  const digits = micros.toString().padStart(7, '0');
  return `${digits.slice(0, -6)}.${digits.slice(-6)}`;
}

/** USD as micro-dollars ("1.5" → 1,500,000n). */
export function usdToMicros(usd: string): bigint {
  const [whole = '0', fraction = ''] = usd.split('.');
  return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

/**
 * `user`: per end user, across all of that person's wallets, the user being the verified sponsorship token's `sub`
 * (src/sponsorshipTokens/); a request without a token is denied by a policy with such a cap (`userRequired`).
 */
export const CAP_SCOPES = ['dapp', 'sender', 'user', 'op'] as const;
export const CAP_UNITS = ['wei', 'usd', 'ops'] as const;
export const CAP_RESETS = ['never', 'hourly', 'daily', 'weekly', 'monthly'] as const;

export type CapScope = (typeof CAP_SCOPES)[number];
export type CapUnit = (typeof CAP_UNITS)[number];
export type CapReset = (typeof CAP_RESETS)[number];

const capSchema = z
  .strictObject({
    scope: z.enum(CAP_SCOPES),
    unit: z.enum(CAP_UNITS),
    limit: z.string(),
    resets: z.enum(CAP_RESETS).default('never'),
  })
  .superRefine((cap, ctx) => {
    const limit = (cap.unit === 'usd' ? usdString : integerString).safeParse(cap.limit);
    if (!limit.success) {
      ctx.addIssue({ code: 'custom', path: ['limit'], message: limit.error.issues[0]?.message ?? 'invalid limit' });
    }
    if (cap.scope === 'op' && cap.unit === 'ops') {
      ctx.addIssue({ code: 'custom', path: ['unit'], message: 'a per-op cap is in wei or usd (one op is one op)' });
    }
    if (cap.scope === 'op' && cap.resets !== 'never') {
      ctx.addIssue({ code: 'custom', path: ['resets'], message: 'a per-op cap does not reset' });
    }
  })
  .transform((cap) => ({
    scope: cap.scope,
    unit: cap.unit,
    resets: cap.resets,
    /** wei, micro-USD or a count. */
    limit: cap.unit === 'usd' ? usdToMicros(cap.limit) : BigInt(cap.limit),
  }));

const bytes32 = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 32-byte 0x hex value')
  .transform((h): Hex => h.toLowerCase() as Hex);
/**
 * Whose holdings a gating rule reads: the op's sender (default), or `user`, the address the verified sponsorship
 * token claims for the person (its `addr` claim); a rule for `user` denies a request without one.
 */
const subject = z.enum(['sender', 'user'], { error: 'subject must be "sender" or "user"' }).default('sender');

/**
 * Gating rules (docs/guides/policies.md, "Gating rules"): read on the request's chain, after every other rule,
 * through one bounded cache (chain/gatingReads.ts).
 */
const attestationRule = z.strictObject({
  /** The EAS contract on the chains the policy applies to. */
  eas: address,
  /** The schema UID the attestation must be of. */
  schema: bytes32,
  /** The attesters trusted for it. */
  attesters: z
    .array(address)
    .min(1, 'attesters: list at least one attester address')
    .max(10, 'attesters: at most 10 addresses'),
  /** When set, the attestation must have been made at most this long ago. */
  maxAgeSeconds: z
    .number()
    .int()
    .positive()
    .max(100 * 365 * 24 * 3600)
    .optional(),
  subject,
});
const nftRule = z
  .strictObject({
    standard: z.enum(['erc721', 'erc1155'], { error: 'standard must be "erc721" or "erc1155"' }),
    contract: address,
    /** ERC-1155 only: the token id counted. */
    tokenId: integerString.transform((v) => BigInt(v)).optional(),
    minCount: integerString
      .refine((v) => v !== '0', 'minCount must be at least 1')
      .transform((v) => BigInt(v))
      .default(1n),
    subject,
  })
  .superRefine((r, ctx) => {
    if (r.standard === 'erc1155' && r.tokenId === undefined) {
      ctx.addIssue({ code: 'custom', path: ['tokenId'], message: 'an erc1155 rule names the tokenId it counts' });
    }
    if (r.standard === 'erc721' && r.tokenId !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['tokenId'],
        message: 'an erc721 rule counts every token of the contract: leave tokenId out',
      });
    }
  });
const minBalanceRule = z.strictObject({
  /** An ERC-20 contract, or `native` for the chain's coin. */
  token: z.union([z.literal('native'), address], { error: 'token must be an ERC-20 address or "native"' }),
  /** In the token's base units (wei for native). */
  min: integerString.transform((v) => BigInt(v)),
  subject,
});

export type AttestationRule = z.infer<typeof attestationRule>;
export type NftRule = z.infer<typeof nftRule>;
export type MinBalanceRule = z.infer<typeof minBalanceRule>;

export const policyRulesSchema = z
  .strictObject({
    /** Unix seconds: before, the policy does not apply. */
    startsAt: unixSeconds.optional(),
    /** Unix seconds: from then on, the policy does not apply. */
    endsAt: unixSeconds.optional(),
    /** The chains it applies to; absent: all of the dApp's chains. */
    chainIds: z.array(z.number().int().positive()).min(1).max(100).optional(),
    senders: z
      .strictObject({
        allow: z.array(address).min(1).max(10_000).optional(),
        block: z.array(address).min(1).max(10_000).optional(),
      })
      .optional(),
    /** The contracts the account may call, each with the methods allowed (absent: any method). */
    contracts: z
      .array(z.strictObject({ address, selectors: z.array(selector).min(1).max(100).optional() }))
      .min(1)
      .max(1000)
      .optional(),
    /** Whether an op that deploys its account (initCode) is sponsored; default true. */
    sponsorDeployment: z.boolean().optional(),
    /** A gas-price ceiling in wei, tighter than the deployment's signing bounds. */
    maxFeePerGas: integerString.transform((v) => BigInt(v)).optional(),
    caps: z.array(capSchema).min(1).max(20).optional(),
    attestation: attestationRule.optional(),
    nft: nftRule.optional(),
    minBalance: minBalanceRule.optional(),
  })
  .refine((r) => r.startsAt === undefined || r.endsAt === undefined || r.startsAt < r.endsAt, {
    message: 'startsAt must be before endsAt',
    path: ['endsAt'],
  })
  .superRefine((r, ctx) => {
    // One cap per scope, unit and cycle: they would count in one ledger row, and one limit is what is meant.
    const seen = new Map<string, number>();
    (r.caps ?? []).forEach((cap, i) => {
      const kind = `${cap.scope}|${cap.unit}|${cap.resets}`;
      const first = seen.get(kind);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['caps', i],
          message: `duplicates caps.${first} (same scope, unit and resets): keep one limit`,
        });
      }
      seen.set(kind, first ?? i);
    });
  });

export type PolicyRules = z.infer<typeof policyRulesSchema>;
export type PolicyCap = NonNullable<PolicyRules['caps']>[number];

export interface Policy {
  readonly id: string;
  readonly name: string;
  readonly active: boolean;
  readonly rules: PolicyRules;
}
