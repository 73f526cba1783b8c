import { type Address, getAddress, type Hex, isAddress } from 'viem';
import { z } from 'zod';

/**
 * The MEE node's quote as abstractjs 1.2.3 posts it to a sponsor's sign endpoint (its `GetQuotePayload`; the SDK
 * sends the node's answer whole). Only what Patron checks is parsed; the answer is the request's own JSON with the
 * payment op's signature written in (src/mee/meeSponsorService.ts), so fields Patron does not know pass through
 * untouched. Numbers are decimal strings on the wire (the SDK stringifies bigints); plain JSON integers are accepted.
 */
const MAX_USER_OPS = 32;
const uint = z.union([
  z.string().regex(/^\d{1,78}$/, 'a decimal integer'),
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
]);
const big = uint.transform((v) => BigInt(v)).refine((v) => v < 2n ** 256n, 'larger than uint256');
const seconds = uint.transform((v) => Number(v)).refine((v) => Number.isSafeInteger(v) && v < 2 ** 48, 'not a uint48');
const chainId = uint.transform((v) => Number(v)).refine((v) => Number.isSafeInteger(v) && v > 0, 'not a chain id');
const hex = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, 'even-length 0x hex') as unknown as z.ZodType<Hex>;
const hash = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 32-byte 0x hex hash') as unknown as z.ZodType<Hex>;
const address = z
  .string()
  .refine((v) => isAddress(v, { strict: false }), 'an address')
  .transform((v): Address => getAddress(v));

const userOpSchema = z.object({
  sender: address,
  nonce: big,
  initCode: hex.optional(),
  callData: hex,
  callGasLimit: big,
  verificationGasLimit: big,
  preVerificationGas: big,
  maxFeePerGas: big,
  maxPriorityFeePerGas: big,
  paymasterAndData: hex.optional(),
  signature: hex.optional(),
});

const quotedOpSchema = z.object({
  userOp: userOpSchema,
  userOpHash: hash,
  meeUserOpHash: hash,
  lowerBoundTimestamp: seconds,
  upperBoundTimestamp: seconds,
  chainId,
  shortEncoding: z.boolean().optional(),
  eip7702Auth: z.unknown().optional(),
});

export const meeQuoteSchema = z.object({
  hash,
  node: address,
  paymentInfo: z.object({
    sponsored: z.boolean().optional(),
    sender: address,
    token: address,
    nonce: big,
    chainId,
    tokenWeiAmount: big,
  }),
  userOps: z.array(quotedOpSchema).min(1).max(MAX_USER_OPS),
});

export type MeeQuote = z.infer<typeof meeQuoteSchema>;
export type QuotedOp = MeeQuote['userOps'][number];
export type QuotedUserOp = QuotedOp['userOp'];
