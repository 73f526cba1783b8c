import { type Address, getAddress, type Hex, keccak256, stringToBytes } from 'viem';
import { ValidationError } from '../../../errors/PatronError.js';
import { checkUint48, hexToBuffer, type Keccak, viemKeccak, writeAddressWord, writeUint256Word } from '../abiWords.js';
import {
  MODE_SPONSORED,
  MODE_TOKEN,
  MODE_TOKEN_GUARANTEED,
  type TokenPaymasterFields,
  tokenModeOf,
} from '../paymasterModes.js';
import { MAX_PRICE_MARKUP, MIN_PRICE_MARKUP, type TokenPrice, weiToTokenUnits } from '../tokenMath.js';
import { DUMMY_SIGNATURE_BYTES } from '../v06/gasEstimatorV06.js';

/**
 * The wire format shared with contracts/PatronPaymasterV07.sol (EntryPoint v0.7, v0.8 and v0.9, which all take
 * a PackedUserOperation; ERC-4337: https://eips.ethereum.org/EIPS/eip-4337). Like patronPaymasterV06.ts it runs
 * on every sponsorship request, so it writes ABI words into preallocated buffers instead of going through viem's
 * generic encoder; the unit tests pin it to that encoder and to viem's getUserOperationHash, the contract tests
 * to the contract's views and the EntryPoints' getUserOpHash.
 *
 * paymasterAndData = paymaster(20) | uint128 paymasterVerificationGasLimit | uint128 paymasterPostOpGasLimit
 *                    | paymasterData
 *   sponsored (154 bytes): [52] mode = 0 | [53:59] uint48 validUntil | [59:65] uint48 validAfter
 *     | [65:73] uint64 maxVerificationGasLimit | [73:81] uint64 maxCallGasLimit | [81:89] uint64 maxPreVerificationGas
 *     | [89:154] r||s||v
 *   token (210 bytes): [52] mode = 1 or 2 | [53:59] validUntil | [59:65] validAfter | [65:89] the three caps | [89:109] token
 *     | [109:125] uint128 exchangeRate | [125:129] uint32 priceMarkup | [129:145] uint128 maxTokenCost | [145:210] sig
 *   v0.9 suffix form (164 / 220 bytes): the same fields, then signature(65) | uint16 65 | PAYMASTER_SIG_MAGIC.
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
/** The contract's POST_OP_OVERHEAD: gas postOp and the EntryPoint after it use, beyond postOp's actualGasCost. */
export const POST_OP_OVERHEAD_V07 = 50_000n;
/** A 65-byte ECDSA signature of the right form, for stubs: estimation needs the final length, not the content. */
export const DUMMY_PAYMASTER_SIGNATURE: Uint8Array = DUMMY_SIGNATURE_BYTES;

const PAYMASTER_DATA_OFFSET = 52;
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
const SIGNATURE_LENGTH = 65;
const SUFFIX_TAIL_LENGTH = 10;
/** EntryPoint v0.9's MIN_PAYMASTER_DATA_WITH_SUFFIX_LEN: a shorter paymasterAndData has no suffix. */
const MIN_SUFFIXED_LENGTH = PAYMASTER_DATA_OFFSET + SUFFIX_TAIL_LENGTH;
const MAGIC = Buffer.from(PAYMASTER_SIG_MAGIC.slice(2), 'hex');
const MAX_UINT32 = 2 ** 32 - 1;
const MAX_UINT64 = (1n << 64n) - 1n;
const MAX_UINT128 = (1n << 128n) - 1n;
const PENALTY_GAS_THRESHOLD = 40_000n;

/**
 * Preimage buffers, reused: every function below fills one completely (zeroes first) and hashes it before
 * returning, all synchronously, so calls never see each other's bytes (patronPaymasterV06.ts does the same).
 */
const OP_PREIMAGE = Buffer.alloc(9 * 32);
const SPONSORED_PREIMAGE = Buffer.alloc(7 * 32);
const TOKEN_PREIMAGE = Buffer.alloc(11 * 32);
const PACKED_OP_PREIMAGE = Buffer.alloc(8 * 32);
const USER_OP_HASH_PREIMAGE = Buffer.alloc(3 * 32);
const STRUCT_PREIMAGE = Buffer.alloc(9 * 32);
const TYPED_DATA_PREIMAGE = Buffer.alloc(2 + 32 + 32);
TYPED_DATA_PREIMAGE[0] = 0x19;
TYPED_DATA_PREIMAGE[1] = 0x01;

/** EIP-712 constants of the v0.8+ userOpHash (UserOperationLib.PACKED_USEROP_TYPEHASH and the domain). */
const PACKED_USEROP_TYPEHASH = keccak256(
  stringToBytes(
    'PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData)',
  ),
  'bytes',
);
const DOMAIN_TYPEHASH = keccak256(
  stringToBytes('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
  'bytes',
);
const DOMAIN_NAME_HASH = keccak256(stringToBytes('ERC4337'), 'bytes');
const DOMAIN_VERSION_HASH = keccak256(stringToBytes('1'), 'bytes');

function checkUint128(value: bigint, field: string): void {
  if (value < 0n || value > MAX_UINT128) throw new ValidationError(`${field} must fit uint128`);
}

function checkCaps(caps: GasCapsV07): void {
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
function writeUint128Pair(buf: Buffer, offset: number, high: bigint, low: bigint, fields: [string, string]): void {
  checkUint128(high, fields[0]);
  checkUint128(low, fields[1]);
  buf.writeBigUInt64BE(high >> 64n, offset);
  buf.writeBigUInt64BE(BigInt.asUintN(64, high), offset + 8);
  buf.writeBigUInt64BE(low >> 64n, offset + 16);
  buf.writeBigUInt64BE(BigInt.asUintN(64, low), offset + 24);
}

function uint128PairHex(high: bigint, low: bigint, fields: [string, string]): Hex {
  checkUint128(high, fields[0]);
  checkUint128(low, fields[1]);
  return `0x${high.toString(16).padStart(32, '0')}${low.toString(16).padStart(32, '0')}`;
}

/**
 * Whether initCode is EntryPoint v0.8's EIP-7702 form: at least 2 bytes, its first 20 (zero-padded when
 * shorter) 0x7702 then zeros (Eip7702Support._isEip7702InitCode).
 */
export function isEip7702InitCode(initCode: Uint8Array): boolean {
  if (initCode.length < 2 || initCode[0] !== 0x77 || initCode[1] !== 0x02) return false;
  const end = Math.min(initCode.length, 20);
  for (let i = 2; i < end; i++) if (initCode[i] !== 0) return false;
  return true;
}

/**
 * keccak256(initCode), or for an EIP-7702 initCode what EntryPoint v0.8+ substitutes for it: keccak256(delegate ||
 * initCode[20:]) (just the delegate when initCode is at most 20 bytes). The caller must then name the sender's
 * delegate: the signature binds it, so it cannot be guessed here.
 */
function initCodeHash(initCode: Hex, eip7702Delegate: Address | undefined, keccak: Keccak): Uint8Array {
  const bytes = hexToBuffer(initCode, 'initCode');
  if (!isEip7702InitCode(bytes)) return keccak.keccak256(bytes);
  if (eip7702Delegate === undefined) {
    throw new ValidationError('an EIP-7702 initCode needs the eip7702Delegate of the sender');
  }
  const preimage = Buffer.alloc(20 + Math.max(0, bytes.length - 20));
  if (eip7702Delegate.length !== 42 || preimage.write(eip7702Delegate.slice(2), 0, 20, 'hex') !== 20) {
    throw new ValidationError('eip7702Delegate must be an address');
  }
  if (bytes.length > 20) bytes.copy(preimage, 20, 20);
  return keccak.keccak256(preimage);
}

/** What the digest binds of the sender's code besides the op's fields (SponsoredHashParamsV07 has both). */
export interface SenderCodeV07 {
  /** The sender's current EIP-7702 delegate; required when initCode is the 0x7702 form, ignored otherwise. */
  readonly eip7702Delegate?: Address | undefined;
  /** The sender's code hash (EXTCODEHASH at inclusion); required when initCode is empty, ignored otherwise. */
  readonly senderCodeHash?: Hex | undefined;
}

/**
 * The contract's `_initCodeHash`: the sender's code hash for an empty initCode, else keccak256(initCode) with an
 * EIP-7702 initCode's delegate substitution.
 */
function boundInitCodeHash(initCode: Hex, sender: SenderCodeV07, keccak: Keccak): Uint8Array {
  if (initCode.length === 2) {
    const hash = sender.senderCodeHash;
    if (hash === undefined) {
      throw new ValidationError('an op without initCode needs the senderCodeHash of its deployed sender');
    }
    const bytes = hexToBuffer(hash, 'senderCodeHash');
    if (bytes.length !== 32) throw new ValidationError('senderCodeHash must be 32 bytes');
    return bytes;
  }
  return initCodeHash(initCode, sender.eip7702Delegate, keccak);
}

/**
 * keccak256(abi.encode(sender, nonce, initCodeHash, keccak256(callData), uint256 maxVerificationGasLimit,
 * uint256 maxCallGasLimit, paymasterGasLimits, uint256 maxPreVerificationGas, gasFees)): the contract's `_opHash`,
 * shared by both modes. The op's own accountGasLimits and preVerificationGas are not read; for an empty initCode
 * the initCode word is the sender's code hash (`senderCode.senderCodeHash`).
 */
export function opHashV07(
  userOp: HashedFieldsV07,
  caps: GasCapsV07,
  senderCode: SenderCodeV07,
  keccak: Keccak,
): Uint8Array {
  checkCaps(caps);
  const buf = OP_PREIMAGE.fill(0);
  writeAddressWord(buf, 0, userOp.sender, 'sender');
  writeUint256Word(buf, 32, userOp.nonce, 'nonce');
  buf.set(boundInitCodeHash(userOp.initCode, senderCode, keccak), 64);
  buf.set(keccak.keccak256(hexToBuffer(userOp.callData, 'callData')), 96);
  buf.writeBigUInt64BE(caps.maxVerificationGasLimit, 128 + 24);
  buf.writeBigUInt64BE(caps.maxCallGasLimit, 160 + 24);
  writeUint128Pair(buf, 192, userOp.paymasterVerificationGasLimit, userOp.paymasterPostOpGasLimit, [
    'paymasterVerificationGasLimit',
    'paymasterPostOpGasLimit',
  ]);
  buf.writeBigUInt64BE(caps.maxPreVerificationGas, 224 + 24);
  writeUint128Pair(buf, 256, userOp.maxPriorityFeePerGas, userOp.maxFeePerGas, [
    'maxPriorityFeePerGas',
    'maxFeePerGas',
  ]);
  return keccak.keccak256(buf);
}

export interface SponsoredHashParamsV07 {
  readonly userOp: HashedFieldsV07;
  readonly chainId: bigint;
  readonly paymaster: Address;
  readonly entryPoint: Address;
  /** Unix seconds (or, on v0.9, block numbers with BLOCK_RANGE_FLAG on both); validUntil 0 means no expiry. */
  readonly validUntil: number;
  readonly validAfter: number;
  /** Signed instead of the op's verificationGasLimit, callGasLimit and preVerificationGas (see GasCapsV07). */
  readonly caps: GasCapsV07;
  /** The sender's current EIP-7702 delegate; required when initCode is the 0x7702 form, ignored otherwise. */
  readonly eip7702Delegate?: Address;
  /** The sender's code hash (EXTCODEHASH); required when initCode is empty, ignored otherwise. */
  readonly senderCodeHash?: Hex;
}

/** The seven words both modes' hashes start with, written into `buf` after zeroing it. */
function writeCommonWords(buf: Buffer, params: SponsoredHashParamsV07, mode: number, keccak: Keccak): Buffer {
  checkUint48(params.validUntil, 'validUntil');
  checkUint48(params.validAfter, 'validAfter');
  const opHash = opHashV07(params.userOp, params.caps, params, keccak);
  buf.fill(0);
  buf.set(opHash, 0);
  writeUint256Word(buf, 32, params.chainId, 'chainId');
  writeAddressWord(buf, 64, params.paymaster, 'paymaster');
  writeAddressWord(buf, 96, params.entryPoint, 'entryPoint');
  buf[159] = mode;
  buf.writeUIntBE(params.validUntil, 192 - 6, 6);
  buf.writeUIntBE(params.validAfter, 224 - 6, 6);
  return buf;
}

/**
 * keccak256(abi.encode(opHash, chainId, paymaster, entryPoint, uint8 0, uint48 validUntil, uint48 validAfter)):
 * the contract's `getSponsoredHash`. The verifying signer signs its EIP-191 digest (`eip191Digest`).
 */
export function sponsoredHashV07(params: SponsoredHashParamsV07, keccak: Keccak): Uint8Array {
  return keccak.keccak256(writeCommonWords(SPONSORED_PREIMAGE, params, MODE_SPONSORED, keccak));
}

function checkTokenFields(f: TokenPaymasterFields): void {
  checkUint128(f.exchangeRate, 'exchangeRate');
  checkUint128(f.maxTokenCost, 'maxTokenCost');
  if (!Number.isSafeInteger(f.priceMarkup) || f.priceMarkup < 0 || f.priceMarkup > MAX_UINT32) {
    throw new ValidationError('priceMarkup must be an integer in the uint32 range');
  }
}

/**
 * keccak256(abi.encode(opHash, chainId, paymaster, entryPoint, uint8 mode (1 or 2), validUntil, validAfter, token,
 * uint128 exchangeRate, uint32 priceMarkup, uint128 maxTokenCost)): the contract's `getTokenHash`.
 */
export function tokenHashV07(params: SponsoredHashParamsV07 & TokenPaymasterFields, keccak: Keccak): Uint8Array {
  const buf = writeCommonWords(TOKEN_PREIMAGE, params, tokenModeOf(params), keccak);
  checkTokenFields(params);
  writeAddressWord(buf, 224, params.token, 'token');
  writeUint256Word(buf, 256, params.exchangeRate, 'exchangeRate');
  buf.writeUInt32BE(params.priceMarkup, 320 - 4);
  writeUint256Word(buf, 320, params.maxTokenCost, 'maxTokenCost');
  return keccak.keccak256(buf);
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

/** Builds paymasterAndData in either signature placement; the contract accepts exactly these lengths. */
export function encodePaymasterAndDataV07(data: PaymasterAndDataV07): Hex {
  checkUint48(data.validUntil, 'validUntil');
  checkUint48(data.validAfter, 'validAfter');
  checkCaps(data.caps);
  if (data.signature.length !== SIGNATURE_LENGTH) throw new ValidationError('signature must be 65 bytes (r||s||v)');
  const fields = data.fields;
  const fieldsEnd = fields.mode === MODE_TOKEN ? TOKEN_FIELDS_END : SPONSORED_FIELDS_END;
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
  if (mode !== MODE_SPONSORED && mode !== MODE_TOKEN && mode !== MODE_TOKEN_GUARANTEED)
    throw new ValidationError(`unknown paymaster mode ${String(mode)}`);
  const fieldsEnd = mode === MODE_SPONSORED ? SPONSORED_FIELDS_END : TOKEN_FIELDS_END;
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

/** The op as the EntryPoint and the contracts take it (PackedUserOperation), with its paymasterAndData. */
export function packUserOperationV07(
  userOp: UserOperationV07 & { readonly paymasterAndData: Hex },
): PackedUserOperationV07 {
  return {
    sender: userOp.sender,
    nonce: userOp.nonce,
    initCode: userOp.initCode,
    callData: userOp.callData,
    accountGasLimits: uint128PairHex(userOp.verificationGasLimit, userOp.callGasLimit, [
      'verificationGasLimit',
      'callGasLimit',
    ]),
    preVerificationGas: userOp.preVerificationGas,
    gasFees: uint128PairHex(userOp.maxPriorityFeePerGas, userOp.maxFeePerGas, ['maxPriorityFeePerGas', 'maxFeePerGas']),
    paymasterAndData: userOp.paymasterAndData,
    signature: userOp.signature,
  };
}

export interface UserOpHashArgsV07 {
  readonly userOp: UnsignedUserOperationV07 & { readonly paymasterAndData: Hex };
  readonly entryPoint: Address;
  readonly chainId: number;
}

/**
 * The words sender, nonce, initCode hash, callData hash, accountGasLimits, preVerificationGas, gasFees and
 * paymasterAndData hash, from byte `at` of a zeroed `buf`: UserOperationLib's pack (v0.7) and, after the
 * typehash, its EIP-712 struct (v0.8+).
 */
function writePackedWords(
  buf: Buffer,
  at: number,
  op: UserOpHashArgsV07['userOp'],
  initHash: Uint8Array,
  pndHash: Uint8Array,
  keccak: Keccak,
): void {
  writeAddressWord(buf, at, op.sender, 'sender');
  writeUint256Word(buf, at + 32, op.nonce, 'nonce');
  buf.set(initHash, at + 64);
  buf.set(keccak.keccak256(hexToBuffer(op.callData, 'callData')), at + 96);
  writeUint128Pair(buf, at + 128, op.verificationGasLimit, op.callGasLimit, ['verificationGasLimit', 'callGasLimit']);
  writeUint256Word(buf, at + 160, op.preVerificationGas, 'preVerificationGas');
  writeUint128Pair(buf, at + 192, op.maxPriorityFeePerGas, op.maxFeePerGas, ['maxPriorityFeePerGas', 'maxFeePerGas']);
  buf.set(pndHash, at + 224);
}

function hashToHex(hash: Uint8Array): Hex {
  return `0x${Buffer.from(hash).toString('hex')}`;
}

/**
 * EntryPoint v0.7's `getUserOpHash`: keccak256(abi.encode(keccak256(pack(op)), entryPoint, chainId)), with
 * initCode, callData and paymasterAndData hashed in the pack. The key of the EntryPoint's UserOperationEvent.
 */
export function userOpHashV07(args: UserOpHashArgsV07, keccak: Keccak = viemKeccak): Hex {
  const op = args.userOp;
  const buf = PACKED_OP_PREIMAGE.fill(0);
  const initHash = keccak.keccak256(hexToBuffer(op.initCode, 'initCode'));
  const pndHash = keccak.keccak256(hexToBuffer(op.paymasterAndData, 'paymasterAndData'));
  writePackedWords(buf, 0, op, initHash, pndHash, keccak);
  const packed = keccak.keccak256(buf);
  const outer = USER_OP_HASH_PREIMAGE.fill(0);
  outer.set(packed, 0);
  writeAddressWord(outer, 32, args.entryPoint, 'entryPoint');
  writeUint256Word(outer, 64, BigInt(args.chainId), 'chainId');
  return hashToHex(keccak.keccak256(outer));
}

/**
 * The paymasterAndData hash of the v0.9 userOpHash (Helpers.paymasterDataKeccak): when it ends with the magic and
 * is long enough to carry a suffix, the signature and its uint16 length are cut out and the magic kept, so the
 * account signs before the paymaster does. A declared length reaching into the 52-byte prefix makes the
 * EntryPoint revert (InvalidPaymasterSignatureLength), so it is refused here.
 */
function paymasterAndDataHashV09(pnd: Buffer, keccak: Keccak): Uint8Array {
  if (pnd.length < MIN_SUFFIXED_LENGTH || !pnd.subarray(pnd.length - 8).equals(MAGIC)) return keccak.keccak256(pnd);
  const signatureLength = pnd.readUInt16BE(pnd.length - SUFFIX_TAIL_LENGTH);
  if (signatureLength === 0) return keccak.keccak256(pnd);
  if (signatureLength > pnd.length - MIN_SUFFIXED_LENGTH) {
    throw new ValidationError('the paymaster signature suffix declares more bytes than paymasterAndData holds');
  }
  const kept = pnd.length - signatureLength - SUFFIX_TAIL_LENGTH;
  const preimage = Buffer.alloc(kept + 8);
  pnd.copy(preimage, 0, 0, kept);
  MAGIC.copy(preimage, kept);
  return keccak.keccak256(preimage);
}

/** Per (chainId, EntryPoint): the domain separators a process ever needs are a handful. */
const domainSeparators = new Map<string, Uint8Array>();

function domainSeparator(chainId: number, entryPoint: Address, keccak: Keccak): Uint8Array {
  const key = `${chainId}:${entryPoint.toLowerCase()}`;
  const cached = domainSeparators.get(key);
  if (cached !== undefined) return cached;
  const buf = Buffer.alloc(5 * 32);
  buf.set(DOMAIN_TYPEHASH, 0);
  buf.set(DOMAIN_NAME_HASH, 32);
  buf.set(DOMAIN_VERSION_HASH, 64);
  writeUint256Word(buf, 96, BigInt(chainId), 'chainId');
  writeAddressWord(buf, 128, entryPoint, 'entryPoint');
  const separator = keccak.keccak256(buf);
  domainSeparators.set(key, separator);
  return separator;
}

/**
 * EntryPoint v0.8 and v0.9's `getUserOpHash`: the EIP-712 hash of the PackedUserOperation struct, domain
 * {name "ERC4337", version "1", chainId, verifyingContract entryPoint}. For an EIP-7702 initCode the initCode
 * hash is replaced by the delegate's (as in the paymaster's own hash; `eip7702Delegate` is then required). On
 * v0.9 a paymaster signature in the suffix is left out (see paymasterAndDataHashV09); v0.8 hashes it whole.
 */
export function userOpHashV08(
  args: UserOpHashArgsV07 & { readonly version: '0.8' | '0.9'; readonly eip7702Delegate?: Address },
  keccak: Keccak = viemKeccak,
): Hex {
  const op = args.userOp;
  const initHash = initCodeHash(op.initCode, args.eip7702Delegate, keccak);
  const pnd = hexToBuffer(op.paymasterAndData, 'paymasterAndData');
  const pndHash = args.version === '0.9' ? paymasterAndDataHashV09(pnd, keccak) : keccak.keccak256(pnd);
  const buf = STRUCT_PREIMAGE.fill(0);
  buf.set(PACKED_USEROP_TYPEHASH, 0);
  writePackedWords(buf, 32, op, initHash, pndHash, keccak);
  const structHash = keccak.keccak256(buf);
  TYPED_DATA_PREIMAGE.set(domainSeparator(args.chainId, args.entryPoint, keccak), 2);
  TYPED_DATA_PREIMAGE.set(structHash, 34);
  return hashToHex(keccak.keccak256(TYPED_DATA_PREIMAGE));
}

/** The userOpHash of whichever EntryPoint version; the spend ledger and settlement key ops by it. */
export function userOpHashForVersion(
  args: UserOpHashArgsV07 & { readonly version: EntryPointVersionV07; readonly eip7702Delegate?: Address },
  keccak: Keccak = viemKeccak,
): Hex {
  if (args.version === '0.7') return userOpHashV07(args, keccak);
  return userOpHashV08({ ...args, version: args.version }, keccak);
}

/**
 * The contract's `maxPenaltyGas`: the most unused-gas penalty the EntryPoint can add after postOp, beyond the
 * actualGasCost postOp was given. v0.7: 10 % of callGasLimit + paymasterPostOpGasLimit (all charged after
 * postOp). v0.8/v0.9: the execution penalty is already in postOp's actualGasCost, and the postOp penalty applies
 * only when more than 40,000 gas of the postOp limit is unused, so 10 % of paymasterPostOpGasLimit above that.
 */
export function maxPenaltyGas(args: {
  readonly callGasLimit: bigint;
  readonly paymasterPostOpGasLimit: bigint;
  readonly version: EntryPointVersionV07;
}): bigint {
  if (args.version === '0.7') return (args.callGasLimit + args.paymasterPostOpGasLimit) / 10n;
  return args.paymasterPostOpGasLimit > PENALTY_GAS_THRESHOLD ? args.paymasterPostOpGasLimit / 10n : 0n;
}

/** What the signature bounds the op's gas by: the three caps and the paymaster's own two limits (signed exactly). */
export interface SignedGasV07 extends GasCapsV07 {
  readonly paymasterVerificationGasLimit: bigint;
  readonly paymasterPostOpGasLimit: bigint;
}

/**
 * The EntryPoint's prefund at the caps, the most an op signed with them can take from the deposit: (caps +
 * paymaster limits) at maxFeePerGas. The op's own limits are at most the caps, its prefund at most this, and the
 * unused-gas penalty is charged within the prefund, never above.
 */
export function worstCaseCostV07(gas: SignedGasV07, maxFeePerGas: bigint): bigint {
  return (
    (gas.maxVerificationGasLimit +
      gas.maxCallGasLimit +
      gas.paymasterVerificationGasLimit +
      gas.paymasterPostOpGasLimit +
      gas.maxPreVerificationGas) *
    maxFeePerGas
  );
}

/**
 * What the contract's postOp charges: actualGasCost (the figure postOp is given) plus POST_OP_OVERHEAD and the
 * penalty bound at the op's fee per gas, converted and marked up, rounded up, capped by the signed maximum.
 */
export function tokenChargeV07(args: {
  readonly actualGasCost: bigint;
  readonly actualUserOpFeePerGas: bigint;
  readonly maxPenaltyGas: bigint;
  readonly price: TokenPrice;
  readonly maxTokenCost: bigint;
}): bigint {
  const wei = args.actualGasCost + (POST_OP_OVERHEAD_V07 + args.maxPenaltyGas) * args.actualUserOpFeePerGas;
  const charge = weiToTokenUnits(wei, args.price);
  // biome-ignore lint/complexity/useMathMinMax: bigint, which Math.min does not take
  return charge > args.maxTokenCost ? args.maxTokenCost : charge;
}

/**
 * A cap no charge of an op within the gas caps can exceed: postOp's actualGasCost is at most the prefund, itself
 * at most worstCaseCostV07, and the penalty bound grows with callGasLimit (v0.7), here at maxCallGasLimit; so the
 * charge formula at worstCaseCostV07 and maxFeePerGas bounds every outcome. The service signs it as maxTokenCost.
 */
export function maxTokenCostV07(
  gas: SignedGasV07,
  maxFeePerGas: bigint,
  price: TokenPrice,
  version: EntryPointVersionV07,
): bigint {
  const penalty = maxPenaltyGas({
    callGasLimit: gas.maxCallGasLimit,
    paymasterPostOpGasLimit: gas.paymasterPostOpGasLimit,
    version,
  });
  const cost = weiToTokenUnits(
    worstCaseCostV07(gas, maxFeePerGas) + (POST_OP_OVERHEAD_V07 + penalty) * maxFeePerGas,
    price,
  );
  if (cost > MAX_UINT128) throw new ValidationError('the maximum token cost does not fit uint128');
  return cost;
}

/** paymasterAndData without its v0.9 suffix: the 65-byte signature, its uint16 length and the 8-byte magic. */
export function unsuffixedPrefix(paymasterAndData: Hex): Hex {
  return paymasterAndData.slice(0, paymasterAndData.length - (SIGNATURE_LENGTH + SUFFIX_TAIL_LENGTH) * 2) as Hex;
}
