import type { Address, Hex } from 'viem';
import { z } from 'zod';
import type { PartialUserOperation } from '../../paymaster/partialUserOperation.js';
import { webhookDataProblem } from '../../webhooks/webhookDataBounds.js';
import { address, isJsonObject, NOT_SURE, type Read, readOptionalAddress } from './scalars.js';
import { parsePartialUserOperationFast } from './userOperation.js';

/*
 * The Biconomy dialect's mode object (`params[1]`, and the ERC-7677 context, which carries the same fields) as a
 * zod schema and a fast parser for the common shape (the contract in scalars.ts), and the dialect's
 * `[userOperation, modeObject]` params.
 */

/** `webhookData`: a JSON object within the bounds of webhookDataBounds.ts (depth and size). */
const webhookDataSchema = z
  .record(z.string(), z.unknown(), { error: 'must be a JSON object' })
  .superRefine((v, ctx) => {
    const problem = webhookDataProblem(v);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

/**
 * The dApp backend's token for this call (docs/guides/sponsorship-tokens.md): a string, read and verified on the
 * sponsorship path (sponsorshipTokens/tokenCarriers.ts); its length bound is the verifier's.
 */
const sponsorshipTokenSchema = z.string({ error: 'must be a string (the sponsorship token from the dApp backend)' });

/** The policy a request names (Pimlico's and Alchemy's `sponsorshipPolicyId`); bounded, never echoed in full. */
const sponsorshipPolicyIdSchema = z
  .string({ error: 'must be a string' })
  .min(1, { error: 'must not be empty' })
  .max(100, { error: 'must be at most 100 characters' });

/**
 * The EAS attestation a policy's attestation rule reads (docs/guides/policies.md, "Gating rules"): EAS has no index
 * by recipient on chain, so the caller names the uid and Patron checks every field of it.
 */
export const attestationUidSchema = z
  .string({ error: 'must be a 32-byte 0x hex string' })
  .regex(/^0x[0-9a-fA-F]{64}$/, { error: 'must be a 32-byte 0x hex string' })
  .transform((v) => v.toLowerCase() as Hex);

/**
 * The mode object (`params[1]`) of the Biconomy dialect: spec §2.4/§2.5 plus the SDK-side siblings
 * (`webhookData`, `calculateGasLimits`, `smartAccountInfo` next to `mode`). `mode` may be absent (Biconomy:
 * "try SPONSORED, fall back to ERC20"); SPONSORSHIP is the spec table's name for SPONSORED.
 * `token` is Pimlico's ERC-20 context (permissionless's prepareUserOperationForErc20Paymaster and Safe's relay-kit
 * send `{ token }` as the ERC-7677 context): the ERC20 mode paying in that token, so it sets `mode` to ERC20 when
 * none is given, and is refused beside SPONSORED rather than silently sponsoring an op its sender meant to pay for.
 */
export const modeObjectSchema = z
  .object(
    {
      mode: z
        .string({ error: 'must be "SPONSORED" or "ERC20"' })
        .transform((v) => v.trim().toUpperCase())
        .pipe(z.enum(['SPONSORED', 'SPONSORSHIP', 'ERC20'], { error: 'must be "SPONSORED" or "ERC20"' }))
        .transform((v) => (v === 'SPONSORSHIP' ? ('SPONSORED' as const) : v))
        .optional(),
      calculateGasLimits: z.boolean({ error: 'must be a boolean' }).optional(),
      expiryDuration: z
        .number({ error: 'must be a number of seconds' })
        .int({ error: 'must be a whole number of seconds' })
        .positive({ error: 'must be a positive number of seconds' })
        .optional(),
      sponsorshipInfo: z
        .object(
          { webhookData: webhookDataSchema.optional(), smartAccountInfo: z.unknown().optional() },
          { error: 'must be an object' },
        )
        .optional(),
      webhookData: webhookDataSchema.optional(),
      tokenInfo: z.unknown().optional(),
      sponsorshipPolicyId: sponsorshipPolicyIdSchema.optional(),
      token: address.optional(),
      attestationUid: attestationUidSchema.optional(),
      sponsorshipToken: sponsorshipTokenSchema.optional(),
    },
    { error: 'must be a mode object' },
  )
  .superRefine((m, ctx) => {
    if (m.token !== undefined && m.mode === 'SPONSORED') {
      ctx.addIssue({ code: 'custom', message: TOKEN_WITH_SPONSORED, path: ['token'] });
    }
  })
  .transform(toModeObject);

const TOKEN_WITH_SPONSORED =
  'names a fee token, which pays gas in ERC20 mode; it cannot go with mode "SPONSORED" (leave mode out or send "ERC20")';

function toModeObject(m: {
  mode?: 'SPONSORED' | 'ERC20' | undefined;
  calculateGasLimits?: boolean | undefined;
  expiryDuration?: number | undefined;
  sponsorshipInfo?: { webhookData?: Record<string, unknown> | undefined } | undefined;
  webhookData?: Record<string, unknown> | undefined;
  tokenInfo?: unknown;
  sponsorshipPolicyId?: string | undefined;
  token?: Address | undefined;
  attestationUid?: Hex | undefined;
  sponsorshipToken?: string | undefined;
}) {
  return {
    mode: m.mode ?? (m.token === undefined ? undefined : ('ERC20' as const)),
    calculateGasLimits: m.calculateGasLimits,
    expiryDuration: m.expiryDuration,
    webhookData: m.sponsorshipInfo?.webhookData ?? m.webhookData ?? {},
    tokenInfo: m.tokenInfo,
    sponsorshipPolicyId: m.sponsorshipPolicyId,
    token: m.token,
    attestationUid: m.attestationUid,
    sponsorshipToken: m.sponsorshipToken,
  };
}

export type ModeObject = z.infer<typeof modeObjectSchema>;

/** z.record(z.string(), z.unknown()): a copy of the own enumerable keys, `__proto__` left out. */
function readOptionalRecord(v: unknown): Read<Record<string, unknown> | undefined> {
  if (v === undefined) return undefined;
  if (!isJsonObject(v)) return NOT_SURE;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) if (key !== '__proto__') out[key] = v[key];
  return out;
}

const MODES: Readonly<Record<string, 'SPONSORED' | 'ERC20'>> = {
  SPONSORED: 'SPONSORED',
  SPONSORSHIP: 'SPONSORED',
  ERC20: 'ERC20',
};

/** `modeObjectSchema` for the common shape, or undefined (run the schema); see scalars.ts. */
export function parseModeObjectFast(v: unknown): ModeObject | undefined {
  if (!isJsonObject(v)) return undefined;
  let mode: 'SPONSORED' | 'ERC20' | undefined;
  if (v.mode !== undefined) {
    if (typeof v.mode !== 'string') return undefined;
    const name = v.mode.trim().toUpperCase();
    mode = Object.hasOwn(MODES, name) ? MODES[name] : undefined;
    if (mode === undefined) return undefined;
  }
  const { calculateGasLimits, expiryDuration, sponsorshipInfo } = v;
  if (calculateGasLimits !== undefined && typeof calculateGasLimits !== 'boolean') return undefined;
  if (
    expiryDuration !== undefined &&
    !(typeof expiryDuration === 'number' && Number.isSafeInteger(expiryDuration) && expiryDuration > 0)
  ) {
    return undefined;
  }
  let infoWebhookData: Read<Record<string, unknown> | undefined>;
  if (sponsorshipInfo !== undefined) {
    if (!isJsonObject(sponsorshipInfo)) return undefined;
    infoWebhookData = readOptionalRecord(sponsorshipInfo.webhookData);
  }
  const webhookData = readOptionalRecord(v.webhookData);
  const policyId = v.sponsorshipPolicyId;
  if (policyId !== undefined && !(typeof policyId === 'string' && policyId.length > 0 && policyId.length <= 100)) {
    return undefined;
  }
  const sponsorshipToken = v.sponsorshipToken;
  if (sponsorshipToken !== undefined && typeof sponsorshipToken !== 'string') return undefined;
  const token = readOptionalAddress(v.token);
  const uid = v.attestationUid;
  if (uid !== undefined && !(typeof uid === 'string' && /^0x[0-9a-fA-F]{64}$/.test(uid))) return undefined;
  // A token beside SPONSORED is refused: the schema says so.
  if (token === NOT_SURE || (token !== undefined && mode === 'SPONSORED')) return undefined;
  if (infoWebhookData === NOT_SURE || webhookData === NOT_SURE) return undefined;
  // Out of bounds: the schema says which bound, and where.
  if (infoWebhookData !== undefined && webhookDataProblem(infoWebhookData) !== undefined) return undefined;
  if (webhookData !== undefined && webhookDataProblem(webhookData) !== undefined) return undefined;
  return toModeObject({
    mode,
    calculateGasLimits,
    expiryDuration,
    sponsorshipInfo: sponsorshipInfo === undefined ? undefined : { webhookData: infoWebhookData },
    webhookData,
    tokenInfo: v.tokenInfo,
    sponsorshipPolicyId: policyId,
    token,
    attestationUid: uid === undefined ? undefined : (uid.toLowerCase() as Hex),
    sponsorshipToken,
  });
}

/** `[userOperation, modeObject]` (the Biconomy dialect's params) for the common shape, or undefined. */
export function parseUserOperationAndModeFast(params: unknown): [PartialUserOperation, ModeObject] | undefined {
  if (!Array.isArray(params) || params.length !== 2) return undefined;
  const op = parsePartialUserOperationFast(params[0]);
  const mode = op === undefined ? undefined : parseModeObjectFast(params[1]);
  return op === undefined || mode === undefined ? undefined : [op, mode];
}
