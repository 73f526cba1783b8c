import { type Address, getAddress, type Hex } from 'viem';
import { ValidationError } from '../../../errors/PatronError.js';
import { checkUint48, hexToBuffer, writeUint256Word } from '../abiWords.js';
import {
  MAX_PERMIT_SIGNATURE_LENGTH,
  MODE_SPONSORED,
  MODE_TOKEN,
  MODE_TOKEN_GUARANTEED,
  MODE_TOKEN_PERMIT,
  type TokenPaymasterFields,
  type TokenPermit,
  tokenModeOf,
} from '../paymasterModes.js';
import { MAX_PRICE_MARKUP, MIN_PRICE_MARKUP } from '../tokenMath.js';
import { DUMMY_SIGNATURE_BYTES } from '../v06/gasEstimatorV06.js';

/**
 * The wire format shared with contracts/PatronPaymasterV07.sol (EntryPoint v0.7, v0.8 and v0.9, which all take
 * a PackedUserOperation; ERC-4337: https://eips.ethereum.org/EIPS/eip-4337): the op's types, the paymasterAndData
 * layout and its encoder and decoder. The digests and userOpHashes over it are hashesV07.ts, what an op can cost
 * chargesV07.ts. Like patronPaymasterV06.ts they run on every sponsorship request, so they write bytes themselves
 * instead of going through viem's generic encoder; the unit tests pin them to that encoder and to viem's
 * getUserOperationHash, the contract tests to the contract's views and the EntryPoints' getUserOpHash.
 *
 * paymasterAndData = paymaster(20) | uint128 paymasterVerificationGasLimit | uint128 paymasterPostOpGasLimit
 *                    | paymasterData
 *   sponsored (154 bytes): [52] mode = 0 | [53:59] uint48 validUntil | [59:65] uint48 validAfter
 *     | [65:73] uint64 maxVerificationGasLimit | [73:81] uint64 maxCallGasLimit | [81:89] uint64 maxPreVerificationGas
 *     | [89:154] r||s||v
 *   token (210 bytes): [52] mode = 1 or 2 | [53:59] validUntil | [59:65] validAfter | [65:89] the three caps | [89:109] token
 *     | [109:125] uint128 exchangeRate | [125:129] uint32 priceMarkup | [129:145] uint128 maxTokenCost | [145:210] sig
 *   token permit (244 + n bytes): [52] mode = 3 | [53:145] as the token mode | [145:177] uint256 permitValue
 *     | [177:179] uint16 n | [179:179+n] the permit signature | [179+n:244+n] sig
 *   v0.9 suffix form (164 / 220 / 254 + n bytes): the same fields, then signature(65) | uint16 65 | PAYMASTER_SIG_MAGIC.
 *
 * The signature binds caps of the account's verificationGasLimit, callGasLimit and preVerificationGas, not their
 * values: viem's prepareUserOperation (without a stub call) asks for paymasterData before the bundler estimates
 * those limits. An op above any cap fails as AA34. Signing caps equal to known limits is exact binding.
 */

export type UserOperationV07 = {
  sender: Address;
  nonce: bigint;
  /** factory || factoryData, or 0x; for an EIP-7702 account the 0x7702 marker (padded to 20 bytes or not) || init data. */
  initCode: Hex;
  callData: Hex;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
  signature: Hex;
};

/** The op without the account's signature: what the EntryPoint's userOpHash covers (with paymasterAndData). */
export type UnsignedUserOperationV07 = Omit<UserOperationV07, 'signature'>;

/**
 * The op fields the paymaster's hash covers exactly: everything but paymasterData, the account's signature and the
 * three account gas values, for which the hash takes GasCapsV07 instead.
 */
export type HashedFieldsV07 = Omit<
  UserOperationV07,
  'signature' | 'verificationGasLimit' | 'callGasLimit' | 'preVerificationGas'
>;

/** Upper bounds of the account's gas values, signed in their place; each fits uint64. */
export interface GasCapsV07 {
  readonly maxVerificationGasLimit: bigint;
  readonly maxCallGasLimit: bigint;
  readonly maxPreVerificationGas: bigint;
}

/** EntryPoint v0.7+'s PackedUserOperation, as the contracts take it. */
export type PackedUserOperationV07 = {
  sender: Address;
  nonce: bigint;
  initCode: Hex;
  callData: Hex;
  accountGasLimits: Hex;
  preVerificationGas: bigint;
  gasFees: Hex;
  paymasterAndData: Hex;
  signature: Hex;
};

export type EntryPointVersionV07 = '0.7' | '0.8' | '0.9';

export const SPONSORED_PAYMASTER_AND_DATA_LENGTH_V07 = 154;
export const TOKEN_PAYMASTER_AND_DATA_LENGTH_V07 = 210;

/** With the signature in the v0.9 suffix: 10 bytes more (uint16 length, 8-byte magic). */
export const SPONSORED_SUFFIXED_LENGTH_V07 = 164;
export const TOKEN_SUFFIXED_LENGTH_V07 = 220;

/** keccak256("PaymasterSignature")[:8]: EntryPoint v0.9's marker of a paymaster signature after paymasterData. */
export const PAYMASTER_SIG_MAGIC: Hex = '0x22e325a297439656';

/** EntryPoint v0.9: both window bounds with bit 47 set are block numbers (ERC4337Utils.BLOCK_RANGE_FLAG). */
export const BLOCK_RANGE_FLAG = 2 ** 47;

/** A 65-byte ECDSA signature of the right form, for stubs: estimation needs the final length, not the content. */
export const DUMMY_PAYMASTER_SIGNATURE: Uint8Array = DUMMY_SIGNATURE_BYTES;

export const PAYMASTER_DATA_OFFSET = 52;
const MODE_OFFSET = 52;
const VALID_UNTIL_OFFSET = 53;
const VALID_AFTER_OFFSET = 59;
const MAX_VERIFICATION_GAS_OFFSET = 65;
const MAX_CALL_GAS_OFFSET = 73;
const MAX_PRE_VERIFICATION_GAS_OFFSET = 81;
const SPONSORED_FIELDS_END = 89;
const TOKEN_OFFSET = 89;
const RATE_OFFSET = 109;
const MARKUP_OFFSET = 125;
const MAX_COST_OFFSET = 129;
const TOKEN_FIELDS_END = 145;
const PERMIT_VALUE_OFFSET = 145;
const PERMIT_LENGTH_OFFSET = 177;
const PERMIT_SIGNATURE_OFFSET = 179;
/** The permit mode's paymasterAndData length with an empty permit signature (the contract's TOKEN_PERMIT_LENGTH). */
export const TOKEN_PERMIT_PAYMASTER_AND_DATA_LENGTH_V07 = 244;
export const SIGNATURE_LENGTH = 65;
export const SUFFIX_TAIL_LENGTH = 10;

/** EntryPoint v0.9's MIN_PAYMASTER_DATA_WITH_SUFFIX_LEN: a shorter paymasterAndData has no suffix. */
export const MIN_SUFFIXED_LENGTH = PAYMASTER_DATA_OFFSET + SUFFIX_TAIL_LENGTH;
export const MAGIC = Buffer.from(PAYMASTER_SIG_MAGIC.slice(2), 'hex');

export const MAX_UINT32 = 2 ** 32 - 1;
export const MAX_UINT64 = (1n << 64n) - 1n;
export const MAX_UINT128 = (1n << 128n) - 1n;

export function checkUint128(value: bigint, field: string): void {
  if (value < 0n || value > MAX_UINT128) throw new ValidationError(`${field} must fit uint128`);
}

export function checkCaps(caps: GasCapsV07): void {
  for (const field of ['maxVerificationGasLimit', 'maxCallGasLimit', 'maxPreVerificationGas'] as const) {
    const value = caps[field];
    if (value < 0n || value > MAX_UINT64) throw new ValidationError(`${field} must fit uint64`);
  }
}

/**
 * Caps equal to the op's own limits: exact binding, for when the final limits are known (ERC-7677's stub, then
 * data). Throws when a limit does not fit the uint64 of a cap.
 */
export function exactCapsV07(op: {
  readonly verificationGasLimit: bigint;
  readonly callGasLimit: bigint;
  readonly preVerificationGas: bigint;
}): GasCapsV07 {
  const caps = {
    maxVerificationGasLimit: op.verificationGasLimit,
    maxCallGasLimit: op.callGasLimit,
    maxPreVerificationGas: op.preVerificationGas,
  };
  checkCaps(caps);
  return caps;
}

/** Whether the op's three account gas values are within the caps, as the contract checks (else AA34). */
export function withinCapsV07(
  op: { readonly verificationGasLimit: bigint; readonly callGasLimit: bigint; readonly preVerificationGas: bigint },
  caps: GasCapsV07,
): boolean {
  return (
    op.verificationGasLimit <= caps.maxVerificationGasLimit &&
    op.callGasLimit <= caps.maxCallGasLimit &&
    op.preVerificationGas <= caps.maxPreVerificationGas
  );
}

/** Two uint128 packed in one word, `high` first: accountGasLimits, gasFees and the paymaster gas limits. */
export function writeUint128Pair(
  buf: Buffer,
  offset: number,
  high: bigint,
  low: bigint,
  fields: [string, string],
): void {
  checkUint128(high, fields[0]);
  checkUint128(low, fields[1]);
  buf.writeBigUInt64BE(high >> 64n, offset);
  buf.writeBigUInt64BE(BigInt.asUintN(64, high), offset + 8);
  buf.writeBigUInt64BE(low >> 64n, offset + 16);
  buf.writeBigUInt64BE(BigInt.asUintN(64, low), offset + 24);
}

export function uint128PairHex(high: bigint, low: bigint, fields: [string, string]): Hex {
  checkUint128(high, fields[0]);
  checkUint128(low, fields[1]);
  return `0x${high.toString(16).padStart(32, '0')}${low.toString(16).padStart(32, '0')}`;
}

/** What a paymasterAndData says beyond its gas limits: the mode and, in token mode, the price. */
export type PaymasterFieldsV07 =
  | { readonly mode: typeof MODE_SPONSORED }
  | ({ readonly mode: typeof MODE_TOKEN } & TokenPaymasterFields);

export interface PaymasterAndDataV07 {
  readonly paymaster: Address;
  readonly paymasterVerificationGasLimit: bigint;
  readonly paymasterPostOpGasLimit: bigint;
  readonly fields: PaymasterFieldsV07;
  readonly validUntil: number;
  readonly validAfter: number;
  readonly caps: GasCapsV07;
  /** r || s || v, 65 bytes. */
  readonly signature: Uint8Array;
  /** Put the signature in EntryPoint v0.9's suffix (outside the userOpHash) instead of inside paymasterData. */
  readonly signatureInSuffix?: boolean;
}

/** Where the signed fields end: fixed for modes 0 to 2, after the permit signature in mode 3. */
function fieldsEndOf(fields: PaymasterFieldsV07, permitSignature: Buffer | undefined): number {
  if (fields.mode !== MODE_TOKEN) return SPONSORED_FIELDS_END;
  return permitSignature === undefined ? TOKEN_FIELDS_END : PERMIT_SIGNATURE_OFFSET + permitSignature.length;
}

/** Builds paymasterAndData in either signature placement; the contract accepts exactly these lengths. */
export function encodePaymasterAndDataV07(data: PaymasterAndDataV07): Hex {
  checkUint48(data.validUntil, 'validUntil');
  checkUint48(data.validAfter, 'validAfter');
  checkCaps(data.caps);
  if (data.signature.length !== SIGNATURE_LENGTH) throw new ValidationError('signature must be 65 bytes (r||s||v)');
  const fields = data.fields;
  const permit = fields.mode === MODE_TOKEN ? permitBytes(fields.permit) : undefined;
  const fieldsEnd = fieldsEndOf(fields, permit);
  const suffixed = data.signatureInSuffix === true;
  const buf = Buffer.alloc(fieldsEnd + SIGNATURE_LENGTH + (suffixed ? SUFFIX_TAIL_LENGTH : 0));
  if (data.paymaster.length !== 42 || buf.write(data.paymaster.slice(2), 0, 20, 'hex') !== 20) {
    throw new ValidationError('paymaster must be an address');
  }
  writeUint128Pair(buf, 20, data.paymasterVerificationGasLimit, data.paymasterPostOpGasLimit, [
    'paymasterVerificationGasLimit',
    'paymasterPostOpGasLimit',
  ]);
  buf[MODE_OFFSET] = fields.mode === MODE_TOKEN ? tokenModeOf(fields) : fields.mode;
  buf.writeUIntBE(data.validUntil, VALID_UNTIL_OFFSET, 6);
  buf.writeUIntBE(data.validAfter, VALID_AFTER_OFFSET, 6);
  buf.writeBigUInt64BE(data.caps.maxVerificationGasLimit, MAX_VERIFICATION_GAS_OFFSET);
  buf.writeBigUInt64BE(data.caps.maxCallGasLimit, MAX_CALL_GAS_OFFSET);
  buf.writeBigUInt64BE(data.caps.maxPreVerificationGas, MAX_PRE_VERIFICATION_GAS_OFFSET);
  if (fields.mode === MODE_TOKEN) {
    checkTokenFields(fields);
    if (fields.token.length !== 42 || buf.write(fields.token.slice(2), TOKEN_OFFSET, 20, 'hex') !== 20) {
      throw new ValidationError('token must be an address');
    }
    buf.writeBigUInt64BE(fields.exchangeRate >> 64n, RATE_OFFSET);
    buf.writeBigUInt64BE(BigInt.asUintN(64, fields.exchangeRate), RATE_OFFSET + 8);
    buf.writeUInt32BE(fields.priceMarkup, MARKUP_OFFSET);
    buf.writeBigUInt64BE(fields.maxTokenCost >> 64n, MAX_COST_OFFSET);
    buf.writeBigUInt64BE(BigInt.asUintN(64, fields.maxTokenCost), MAX_COST_OFFSET + 8);
    if (permit !== undefined && fields.permit !== undefined) {
      writeUint256Word(buf, PERMIT_VALUE_OFFSET, fields.permit.value, 'permit.value');
      buf.writeUInt16BE(permit.length, PERMIT_LENGTH_OFFSET);
      permit.copy(buf, PERMIT_SIGNATURE_OFFSET);
    }
  }
  buf.set(data.signature, fieldsEnd);
  if (suffixed) {
    buf.writeUInt16BE(SIGNATURE_LENGTH, fieldsEnd + SIGNATURE_LENGTH);
    MAGIC.copy(buf, fieldsEnd + SIGNATURE_LENGTH + 2);
  }
  return `0x${buf.toString('hex')}`;
}

/**
 * The inverse of encodePaymasterAndDataV07, refusing what the contract reverts on: an unknown mode, any length
 * but the four exact ones, a suffix that does not declare a 65-byte signature, a markup outside 1e6..2e6.
 */
export function decodePaymasterAndDataV07(
  paymasterAndData: Hex,
): PaymasterAndDataV07 & { readonly signatureInSuffix: boolean } {
  const buf = hexToBuffer(paymasterAndData, 'paymasterAndData');
  if (buf.length <= MODE_OFFSET) throw new ValidationError('paymasterAndData is too short to carry a mode');
  const mode = buf[MODE_OFFSET];
  if (mode !== MODE_SPONSORED && mode !== MODE_TOKEN && mode !== MODE_TOKEN_GUARANTEED && mode !== MODE_TOKEN_PERMIT)
    throw new ValidationError(`unknown paymaster mode ${String(mode)}`);
  const fieldsEnd = decodedFieldsEnd(buf, mode);
  const suffixed = buf.length >= SUFFIX_TAIL_LENGTH && buf.subarray(buf.length - 8).equals(MAGIC);
  const expected = fieldsEnd + SIGNATURE_LENGTH + (suffixed ? SUFFIX_TAIL_LENGTH : 0);
  if (buf.length !== expected) {
    throw new ValidationError(`paymasterAndData of mode ${mode} must be ${expected} bytes, got ${buf.length}`);
  }
  if (suffixed && buf.readUInt16BE(fieldsEnd + SIGNATURE_LENGTH) !== SIGNATURE_LENGTH) {
    throw new ValidationError('the paymaster signature suffix must declare 65 bytes');
  }
  const uint128At = (offset: number) => (buf.readBigUInt64BE(offset) << 64n) | buf.readBigUInt64BE(offset + 8);
  const fields: PaymasterFieldsV07 =
    mode !== MODE_SPONSORED
      ? {
          mode: MODE_TOKEN,
          ...(mode === MODE_TOKEN_GUARANTEED ? { guaranteed: true } : {}),
          ...(mode === MODE_TOKEN_PERMIT
            ? {
                permit: {
                  value: (uint128At(PERMIT_VALUE_OFFSET) << 128n) | uint128At(PERMIT_VALUE_OFFSET + 16),
                  signature: `0x${buf.toString('hex', PERMIT_SIGNATURE_OFFSET, fieldsEnd)}` as Hex,
                },
              }
            : {}),
          token: getAddress(`0x${buf.toString('hex', TOKEN_OFFSET, RATE_OFFSET)}`),
          exchangeRate: uint128At(RATE_OFFSET),
          priceMarkup: buf.readUInt32BE(MARKUP_OFFSET),
          maxTokenCost: uint128At(MAX_COST_OFFSET),
        }
      : { mode: MODE_SPONSORED };
  if (fields.mode === MODE_TOKEN && (fields.priceMarkup < MIN_PRICE_MARKUP || fields.priceMarkup > MAX_PRICE_MARKUP)) {
    throw new ValidationError(`priceMarkup must be within ${MIN_PRICE_MARKUP}..${MAX_PRICE_MARKUP}`);
  }
  return {
    paymaster: getAddress(`0x${buf.toString('hex', 0, 20)}`),
    paymasterVerificationGasLimit: uint128At(20),
    paymasterPostOpGasLimit: uint128At(36),
    fields,
    validUntil: buf.readUIntBE(VALID_UNTIL_OFFSET, 6),
    validAfter: buf.readUIntBE(VALID_AFTER_OFFSET, 6),
    caps: {
      maxVerificationGasLimit: buf.readBigUInt64BE(MAX_VERIFICATION_GAS_OFFSET),
      maxCallGasLimit: buf.readBigUInt64BE(MAX_CALL_GAS_OFFSET),
      maxPreVerificationGas: buf.readBigUInt64BE(MAX_PRE_VERIFICATION_GAS_OFFSET),
    },
    signature: new Uint8Array(buf.subarray(fieldsEnd, fieldsEnd + SIGNATURE_LENGTH)),
    signatureInSuffix: suffixed,
  };
}

/** paymasterAndData without its v0.9 suffix: the 65-byte signature, its uint16 length and the 8-byte magic. */
export function unsuffixedPrefix(paymasterAndData: Hex): Hex {
  return paymasterAndData.slice(0, paymasterAndData.length - (SIGNATURE_LENGTH + SUFFIX_TAIL_LENGTH) * 2) as Hex;
}

export function checkTokenFields(f: TokenPaymasterFields): void {
  checkUint128(f.exchangeRate, 'exchangeRate');
  checkUint128(f.maxTokenCost, 'maxTokenCost');
  if (!Number.isSafeInteger(f.priceMarkup) || f.priceMarkup < 0 || f.priceMarkup > MAX_UINT32) {
    throw new ValidationError('priceMarkup must be an integer in the uint32 range');
  }
  permitBytes(f.permit);
  if (f.permit !== undefined && f.guaranteed === true) {
    throw new ValidationError('a permit (mode 3) is prefunded: it cannot also be guaranteed (mode 2)');
  }
}

/** The permit signature's bytes, checked as the contract takes them (undefined without a permit). */
export function permitBytes(permit: TokenPermit | undefined): Buffer | undefined {
  if (permit === undefined) return undefined;
  if (permit.value < 0n || permit.value >= 1n << 256n) throw new ValidationError('permit.value must fit uint256');
  const signature = hexToBuffer(permit.signature, 'permit.signature');
  if (signature.length > MAX_PERMIT_SIGNATURE_LENGTH) {
    throw new ValidationError(`permit.signature must be at most ${MAX_PERMIT_SIGNATURE_LENGTH} bytes`);
  }
  return signature;
}

/** Where a decoded paymasterAndData's signed fields end (mode 3: after the permit signature it declares). */
function decodedFieldsEnd(buf: Buffer, mode: number): number {
  if (mode === MODE_SPONSORED) return SPONSORED_FIELDS_END;
  if (mode !== MODE_TOKEN_PERMIT) return TOKEN_FIELDS_END;
  if (buf.length < PERMIT_SIGNATURE_OFFSET) {
    throw new ValidationError(
      `paymasterAndData of mode 3 must be at least ${TOKEN_PERMIT_PAYMASTER_AND_DATA_LENGTH_V07} bytes`,
    );
  }
  const n = buf.readUInt16BE(PERMIT_LENGTH_OFFSET);
  if (n > MAX_PERMIT_SIGNATURE_LENGTH) {
    throw new ValidationError(`the permit signature must be at most ${MAX_PERMIT_SIGNATURE_LENGTH} bytes, got ${n}`);
  }
  return PERMIT_SIGNATURE_OFFSET + n;
}
