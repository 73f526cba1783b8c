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

/** An EIP-7702 authorization as clients send it with a v0.8+ op; the fields other than `address` for form only. */
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
