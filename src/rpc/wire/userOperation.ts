import type { Address, Hex } from 'viem';
import { z } from 'zod';
import type { Eip7702Auth, PartialUserOperation } from '../../paymaster/partialUserOperation.js';
import {
  address,
  bytes,
  isJsonObject,
  NOT_SURE,
  quantity,
  type Read,
  readAddress,
  readBytes,
  readOptionalAddress,
  readOptionalBytes,
  readQuantity,
} from './scalars.js';

/**
 * The partial user operation of `params[0]` in every encoding real clients send (../shared/notes/clients.md):
 * quantities as hex, decimal strings or numbers (scalars.ts); gas limits possibly absent; a v0.7-shaped op
 * (`factory`/`factoryData`, no `initCode`) from the Nexus SDKs. Parsed once into the domain's PartialUserOperation
 * (paymaster/partialUserOperation.ts); anything else is refused with a message naming the field.
 */

/** secp256k1's group order n. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * A component of an EIP-7702 authorization within what the chain accepts (EIP-7702's checks of an authorization
 * tuple, EIP-2's low s): one the chain would skip leaves the account undelegated, and the op then fails in the bundle
 * after Patron reserved and signed for it, so a malformed one is refused up front (as alto refuses it).
 */
const authComponent = (valid: (v: bigint) => boolean, message: string) => quantity.refine(valid, { error: message });

/**
 * An EIP-7702 authorization as clients send it with a v0.8+ op. Patron reads the delegate (`address`); the other
 * components are checked for form here (the chain id against the chain's in eip7702Sender.ts). viem's own stub
 * authorization while it estimates an undeployed 7702 account (r 0xfff…f000…, s 0x7aaa…, yParity 1, the chain's
 * id and the account's nonce) passes.
 */
const eip7702AuthSchema = z.object(
  {
    address,
    chainId: authComponent((v) => v < 1n << 256n, 'must be a uint256 chain id'),
    nonce: authComponent((v) => v < (1n << 64n) - 1n, 'must be below 2^64 − 1 (EIP-7702)'),
    r: authComponent((v) => v > 0n && v < SECP256K1_N, 'must be a secp256k1 signature value, from 1 to n − 1'),
    s: authComponent(
      (v) => v > 0n && v <= SECP256K1_N / 2n,
      'must be from 1 to n / 2 (a high s is malleable, and refused by the chain: EIP-2)',
    ),
    yParity: authComponent((v) => v === 0n || v === 1n, 'must be 0 or 1'),
  },
  { error: 'must be an EIP-7702 authorization {address, chainId, nonce, r, s, yParity}' },
);

/** `true` when A and B are assignable both ways (the same fields, of the same types), else `never`. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;

// One truth: each schema's output is exactly the domain's type (a field more or less fails to compile).
true satisfies Same<z.output<typeof eip7702AuthSchema>, Eip7702Auth>;

/** Gas fields: absent and zero both mean "not given" (viem stubs send "0x0"). */
const gasGiven = (v: bigint | undefined) => (v === undefined || v === 0n ? undefined : v);
const optionalGas = quantity.optional().transform(gasGiven);

/** The wire's fields once each is parsed (shared by the schema and the fast path below). */
interface ParsedFields {
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
}

/** The parsed fields as the domain sees them: its type is the one truth, the schema's output is exactly it. */
function toPartialUserOperation(op: ParsedFields): PartialUserOperation {
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
true satisfies Same<z.output<typeof partialUserOperationSchema>, PartialUserOperation>;

function readOptionalGas(v: unknown): Read<bigint | undefined> {
  if (v === undefined) return undefined;
  const n = readQuantity(v);
  return n === NOT_SURE ? NOT_SURE : gasGiven(n);
}

/** `partialUserOperationSchema` for the common shape, or undefined (run the schema); see scalars.ts. */
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
