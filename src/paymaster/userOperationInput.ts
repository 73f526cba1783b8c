import type { Address, Hex } from 'viem';
import { z } from 'zod';
import { webhookDataProblem } from '../webhooks/webhookDataBounds.js';
import { toAddress } from './address.js';

/**
 * The partial user operation of `params[0]` in every encoding real clients send (../shared/notes/clients.md):
 * quantities as hex ("0x00" included), decimal strings or numbers; gas limits possibly absent; mixed-case
 * hex; a v0.7-shaped op (`factory`/`factoryData`, no `initCode`) from the Nexus SDKs. Parsed once into bigints
 * and lower-case bytes; anything else is refused with a message naming the field.
 */
const MAX_UINT256 = 2n ** 256n - 1n;
const HEX_QUANTITY = /^0x[0-9a-fA-F]{0,64}$/;
const DECIMAL_QUANTITY = /^\d{1,78}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES = /^0x([0-9a-fA-F]{2})*$/;
/** BYTES for the fast path: the same language (0x, hex digits, an even count) without a repeated group. */
const HEX_DIGITS = /^0x[0-9a-fA-F]*$/;

/** The uint256 a quantity (string or number) stands for, or undefined when it is not one. */
function quantityValue(v: string | number): bigint | undefined {
  const text = typeof v === 'number' ? (Number.isSafeInteger(v) && v >= 0 ? String(v) : '') : v.trim();
  const ok = HEX_QUANTITY.test(text) || DECIMAL_QUANTITY.test(text);
  const n = ok ? BigInt(text === '0x' ? 0 : text) : -1n;
  return n < 0n || n > MAX_UINT256 ? undefined : n;
}

const toBytes = (v: string): Hex => v.toLowerCase() as Hex;

export const quantity = z
  .union([z.string(), z.number()], { error: 'must be a hex or decimal quantity' })
  .transform((v, ctx) => {
    const n = quantityValue(v);
    if (n === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be a hex or decimal quantity (uint256)' });
      return z.NEVER;
    }
    return n;
  });

export const address = z
  .string({ error: 'must be an address' })
  .regex(ADDRESS, { error: 'must be a 20-byte hex address' })
  .transform(toAddress);

export const bytes = z
  .string({ error: 'must be a hex string' })
  .regex(BYTES, { error: 'must be 0x-prefixed hex with an even number of digits' })
  .transform(toBytes);

/**
 * An EIP-7702 authorization as clients send it with a v0.8+ op (`eip7702Auth`): the bundler puts it in its type-4
 * transaction. Patron reads the delegate (`address`), which its v0.8+ signature binds; the other fields are
 * checked for form only (the chain checks the signature).
 */
const eip7702AuthSchema = z.object(
  {
    address,
    chainId: quantity,
    nonce: quantity,
    r: quantity,
    s: quantity,
    yParity: quantity,
  },
  { error: 'must be an EIP-7702 authorization {address, chainId, nonce, r, s, yParity}' },
);
export type Eip7702Auth = z.infer<typeof eip7702AuthSchema>;

/** Gas fields: absent and zero both mean "not given" (viem stubs send "0x0"). */
const gasGiven = (v: bigint | undefined) => (v === undefined || v === 0n ? undefined : v);
const optionalGas = quantity.optional().transform(gasGiven);

export const partialUserOperationSchema = z
  .object(
    {
      sender: address,
      nonce: quantity,
      initCode: bytes.optional(),
      // viem's toSimple7702SmartAccount sends the EIP-7702 marker unpadded; alto accepts it too.
      factory: z.union([address, z.literal('0x7702')]).optional(),
      factoryData: bytes.optional(),
      callData: bytes,
      callGasLimit: optionalGas,
      verificationGasLimit: optionalGas,
      preVerificationGas: optionalGas,
      maxFeePerGas: quantity,
      maxPriorityFeePerGas: quantity,
      // Ignored on input: a client may send a previous answer's paymasterAndData back (getTokenFees does).
      paymasterAndData: bytes.optional(),
      signature: bytes.optional(),
      eip7702Auth: eip7702AuthSchema.nullable().optional(),
    },
    { error: 'must be a user operation object' },
  )
  .transform(toPartialUserOperation);

/** The parsed fields as the rest of Patron sees them (shared by the schema and the fast path below). */
function toPartialUserOperation(op: {
  sender: Address;
  nonce: bigint;
  initCode?: Hex | undefined;
  factory?: Address | undefined;
  factoryData?: Hex | undefined;
  callData: Hex;
  callGasLimit?: bigint | undefined;
  verificationGasLimit?: bigint | undefined;
  preVerificationGas?: bigint | undefined;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  signature?: Hex | undefined;
  eip7702Auth?: Eip7702Auth | null | undefined;
}) {
  return {
    sender: op.sender,
    nonce: op.nonce,
    // v0.7 clients split initCode into factory + factoryData; v0.6 concatenates them.
    initCode:
      op.initCode ??
      (op.factory === undefined ? '0x' : (`${op.factory.toLowerCase()}${(op.factoryData ?? '0x').slice(2)}` as Hex)),
    callData: op.callData,
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    signature: op.signature ?? ('0x' as Hex),
    eip7702Auth: op.eip7702Auth ?? undefined,
  };
}

export type PartialUserOperation = z.infer<typeof partialUserOperationSchema>;

/** `webhookData`: a JSON object within the bounds of webhookDataBounds.ts (depth and size). */
const webhookDataSchema = z
  .record(z.string(), z.unknown(), { error: 'must be a JSON object' })
  .superRefine((v, ctx) => {
    const problem = webhookDataProblem(v);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

/** The policy a request names (Pimlico's and Alchemy's `sponsorshipPolicyId`); bounded, never echoed in full. */
const sponsorshipPolicyIdSchema = z
  .string({ error: 'must be a string' })
  .min(1, { error: 'must not be empty' })
  .max(100, { error: 'must be at most 100 characters' });

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
}) {
  return {
    mode: m.mode ?? (m.token === undefined ? undefined : ('ERC20' as const)),
    calculateGasLimits: m.calculateGasLimits,
    expiryDuration: m.expiryDuration,
    webhookData: m.sponsorshipInfo?.webhookData ?? m.webhookData ?? {},
    tokenInfo: m.tokenInfo,
    sponsorshipPolicyId: m.sponsorshipPolicyId,
    token: m.token,
  };
}

export type ModeObject = z.infer<typeof modeObjectSchema>;

/*
 * The fast path. Every sponsorship request parses `[userOperation, modeObject]`; through zod that is tens of µs
 * of the ~200 µs a request may cost, so the common shape (what every SDK sends) is checked by hand first. The
 * contract: a fast parser either returns exactly what the schema would return for the same input, or undefined
 * ("not sure"), and the caller then runs the schema, which produces the value or the error message. So it only
 * accepts a subset of what the schema accepts (plain objects and the field types the schema allows, nothing
 * else), builds its result with the schema's own transforms, and leaves every refusal to the schema. A test
 * pins the two to each other (userOperationInput.test.ts).
 */

/** An object as JSON.parse makes it; zod's object and record checks accept every such value. */
function isJsonObject(v: unknown): v is Record<string, unknown> {
  return (
    typeof v === 'object' &&
    v !== null &&
    Object.getPrototypeOf(v) === Object.prototype &&
    !Object.hasOwn(v, 'constructor')
  );
}

/** Field readers: the parsed value, NOT_SURE when the schema must decide; `undefined` input means absent. */
const NOT_SURE = Symbol('not sure');
type Read<T> = T | typeof NOT_SURE;

function readQuantity(v: unknown): Read<bigint> {
  if (typeof v !== 'string' && typeof v !== 'number') return NOT_SURE;
  return quantityValue(v) ?? NOT_SURE;
}
function readOptionalGas(v: unknown): Read<bigint | undefined> {
  if (v === undefined) return undefined;
  const n = readQuantity(v);
  return n === NOT_SURE ? NOT_SURE : gasGiven(n);
}
function readAddress(v: unknown): Read<Address> {
  return typeof v === 'string' && ADDRESS.test(v) ? toAddress(v) : NOT_SURE;
}
function readOptionalAddress(v: unknown): Read<Address | undefined> {
  return v === undefined ? undefined : readAddress(v);
}
function readBytes(v: unknown): Read<Hex> {
  return typeof v === 'string' && v.length % 2 === 0 && HEX_DIGITS.test(v) ? toBytes(v) : NOT_SURE;
}
function readOptionalBytes(v: unknown): Read<Hex | undefined> {
  return v === undefined ? undefined : readBytes(v);
}
/** z.record(z.string(), z.unknown()): a copy of the own enumerable keys, `__proto__` left out. */
function readOptionalRecord(v: unknown): Read<Record<string, unknown> | undefined> {
  if (v === undefined) return undefined;
  if (!isJsonObject(v)) return NOT_SURE;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) if (key !== '__proto__') out[key] = v[key];
  return out;
}

/** `partialUserOperationSchema` for the common shape, or undefined (run the schema). */
export function parsePartialUserOperationFast(v: unknown): PartialUserOperation | undefined {
  // An EIP-7702 authorization is rare and nested: the schema reads it.
  if (!isJsonObject(v) || v.eip7702Auth !== undefined) return undefined;
  const sender = readAddress(v.sender);
  const nonce = readQuantity(v.nonce);
  const initCode = readOptionalBytes(v.initCode);
  const factory = readOptionalAddress(v.factory);
  const factoryData = readOptionalBytes(v.factoryData);
  const callData = readBytes(v.callData);
  const callGasLimit = readOptionalGas(v.callGasLimit);
  const verificationGasLimit = readOptionalGas(v.verificationGasLimit);
  const preVerificationGas = readOptionalGas(v.preVerificationGas);
  const maxFeePerGas = readQuantity(v.maxFeePerGas);
  const maxPriorityFeePerGas = readQuantity(v.maxPriorityFeePerGas);
  const paymasterAndData = readOptionalBytes(v.paymasterAndData);
  const signature = readOptionalBytes(v.signature);
  if (
    sender === NOT_SURE ||
    nonce === NOT_SURE ||
    initCode === NOT_SURE ||
    factory === NOT_SURE ||
    factoryData === NOT_SURE ||
    callData === NOT_SURE ||
    callGasLimit === NOT_SURE ||
    verificationGasLimit === NOT_SURE ||
    preVerificationGas === NOT_SURE ||
    maxFeePerGas === NOT_SURE ||
    maxPriorityFeePerGas === NOT_SURE ||
    paymasterAndData === NOT_SURE ||
    signature === NOT_SURE
  ) {
    return undefined;
  }
  return toPartialUserOperation({
    sender,
    nonce,
    initCode,
    factory,
    factoryData,
    callData,
    callGasLimit,
    verificationGasLimit,
    preVerificationGas,
    maxFeePerGas,
    maxPriorityFeePerGas,
    signature,
  });
}

const MODES: Readonly<Record<string, 'SPONSORED' | 'ERC20'>> = {
  SPONSORED: 'SPONSORED',
  SPONSORSHIP: 'SPONSORED',
  ERC20: 'ERC20',
};

/** `modeObjectSchema` for the common shape, or undefined (run the schema). */
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
  const token = readOptionalAddress(v.token);
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
  });
}

/** `[userOperation, modeObject]` (the Biconomy dialect's params) for the common shape, or undefined. */
export function parseUserOperationAndModeFast(params: unknown): [PartialUserOperation, ModeObject] | undefined {
  if (!Array.isArray(params) || params.length !== 2) return undefined;
  const op = parsePartialUserOperationFast(params[0]);
  const mode = op === undefined ? undefined : parseModeObjectFast(params[1]);
  return op === undefined || mode === undefined ? undefined : [op, mode];
}

/**
 * ERC-7677's `[userOperation, entryPoint, chainId, context?]` for the common shape, or undefined (run the schema):
 * every v0.7+ client's stub and data calls. A null or absent context stays as the schema leaves it.
 */
export function parseErc7677ParamsFast(
  params: unknown,
): [PartialUserOperation, Address, bigint, ModeObject | null] | [PartialUserOperation, Address, bigint] | undefined {
  if (!Array.isArray(params) || (params.length !== 3 && params.length !== 4)) return undefined;
  const op = parsePartialUserOperationFast(params[0]);
  const entryPoint = readAddress(params[1]);
  const chainId = readQuantity(params[2]);
  if (op === undefined || entryPoint === NOT_SURE || chainId === NOT_SURE) return undefined;
  if (params.length === 3) return [op, entryPoint, chainId];
  if (params[3] === null) return [op, entryPoint, chainId, null];
  const mode = parseModeObjectFast(params[3]);
  return mode === undefined ? undefined : [op, entryPoint, chainId, mode];
}
