import { type Address, getAddress, type Hex } from 'viem';
import { z } from 'zod';

/**
 * The partial user operation of `params[0]` in every encoding real clients send (../shared/notes/clients.md):
 * quantities as hex ("0x00" included), decimal strings or numbers; gas limits possibly absent; mixed-case
 * hex; a v0.7-shaped op (`factory`/`factoryData`, no `initCode`) from the Nexus SDKs. Parsed once into bigints
 * and lower-case bytes; anything else is refused with a message naming the field.
 */
const MAX_UINT256 = 2n ** 256n - 1n;

export const quantity = z
  .union([z.string(), z.number()], { error: 'must be a hex or decimal quantity' })
  .transform((v, ctx) => {
    const text = typeof v === 'number' ? (Number.isSafeInteger(v) && v >= 0 ? String(v) : '') : v.trim();
    const ok = /^0x[0-9a-fA-F]{0,64}$/.test(text) || /^\d{1,78}$/.test(text);
    const n = ok ? BigInt(text === '0x' ? 0 : text) : -1n;
    if (n < 0n || n > MAX_UINT256) {
      ctx.addIssue({ code: 'custom', message: 'must be a hex or decimal quantity (uint256)' });
      return z.NEVER;
    }
    return n;
  });

export const address = z
  .string({ error: 'must be an address' })
  .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'must be a 20-byte hex address' })
  .transform((v) => getAddress(v.toLowerCase()) as Address);

export const bytes = z
  .string({ error: 'must be a hex string' })
  .regex(/^0x([0-9a-fA-F]{2})*$/, { error: 'must be 0x-prefixed hex with an even number of digits' })
  .transform((v) => v.toLowerCase() as Hex);

/** Gas fields: absent and zero both mean "not given" (viem stubs send "0x0"). */
const optionalGas = quantity.optional().transform((v) => (v === undefined || v === 0n ? undefined : v));

export const partialUserOperationSchema = z
  .object(
    {
      sender: address,
      nonce: quantity,
      initCode: bytes.optional(),
      factory: address.optional(),
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
    },
    { error: 'must be a user operation object' },
  )
  .transform((op) => ({
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
    signature: op.signature ?? '0x',
  }));

export type PartialUserOperation = z.infer<typeof partialUserOperationSchema>;

const jsonObject = z.record(z.string(), z.unknown(), { error: 'must be a JSON object' });

/**
 * The mode object (`params[1]`) of the Biconomy dialect: spec §2.4/§2.5 plus the SDK-side siblings
 * (`webhookData`, `calculateGasLimits`, `smartAccountInfo` next to `mode`). `mode` may be absent (Biconomy:
 * "try SPONSORED, fall back to ERC20"); SPONSORSHIP is the spec table's name for SPONSORED.
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
          { webhookData: jsonObject.optional(), smartAccountInfo: z.unknown().optional() },
          { error: 'must be an object' },
        )
        .optional(),
      webhookData: jsonObject.optional(),
      tokenInfo: z.unknown().optional(),
    },
    { error: 'must be a mode object' },
  )
  .transform((m) => ({
    mode: m.mode,
    calculateGasLimits: m.calculateGasLimits,
    expiryDuration: m.expiryDuration,
    webhookData: m.sponsorshipInfo?.webhookData ?? m.webhookData ?? {},
    tokenInfo: m.tokenInfo,
  }));

export type ModeObject = z.infer<typeof modeObjectSchema>;
