import { type Address, getAddress, type Hex } from 'viem';
import { ValidationError } from '../../../errors/PatronError.js';
import {
  checkUint48,
  hexToBuffer,
  type Keccak,
  keccakOfHex,
  viemKeccak,
  writeAddressWord,
  writeUint256Word,
} from '../abiWords.js';
import {
  MODE_SPONSORED,
  MODE_TOKEN,
  MODE_TOKEN_GUARANTEED,
  type TokenPaymasterFields,
  tokenModeOf,
} from '../paymasterModes.js';

/**
 * The wire format shared with contracts/PatronPaymaster.sol (EntryPoint v0.6, ERC-4337:
 * https://eips.ethereum.org/EIPS/eip-4337). This runs on every sponsorship request, so it writes the ABI words
 * into preallocated buffers itself instead of going through viem's generic `encodeAbiParameters` (tens of µs
 * and many intermediate strings); the unit tests pin it to that generic encoder.
 *
 * sponsored paymasterAndData (98 bytes):
 *   [0:20] paymaster | [20] mode = 0 | [21:27] uint48 validUntil BE | [27:33] uint48 validAfter BE | [33:98] r||s||v
 * token paymasterAndData (154 bytes):
 *   [0:20] paymaster | [20] mode = 1 (prefunded) or 2 (guaranteed by the dApp) | [21:27] validUntil | [27:33] validAfter | [33:53] token
 *   | [53:69] uint128 exchangeRate | [69:73] uint32 priceMarkup | [73:89] uint128 maxTokenCost | [89:154] r||s||v
 */

export type UserOperationV06 = {
  sender: Address;
  nonce: bigint;
  initCode: Hex;
  callData: Hex;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  paymasterAndData: Hex;
  signature: Hex;
};

/** The op fields the paymaster's hash covers (everything but paymasterAndData and signature). */
export type HashedFieldsV06 = Omit<UserOperationV06, 'paymasterAndData' | 'signature'>;

export const SPONSORED_PAYMASTER_AND_DATA_LENGTH = 98;
export const TOKEN_PAYMASTER_AND_DATA_LENGTH = 154;

const MODE_OFFSET = 20;
const VALID_UNTIL_OFFSET = 21;
const VALID_AFTER_OFFSET = 27;
const SIGNATURE_OFFSET = 33;
const TOKEN_OFFSET = 33;
const RATE_OFFSET = 53;
const MARKUP_OFFSET = 69;
const MAX_COST_OFFSET = 73;
const TOKEN_SIGNATURE_OFFSET = 89;
const MAX_UINT32 = 2 ** 32 - 1;
const MAX_UINT128 = (1n << 128n) - 1n;
const SIGNATURE_LENGTH = 65;

/**
 * Preimage buffers, reused: every function below fills one completely (zeroes first) and hashes it before
 * returning, all synchronously, so calls never see each other's bytes; a new zeroed Buffer per hash was three
 * allocations per request for nothing.
 */
const OP_PREIMAGE = Buffer.alloc(9 * 32);
const SPONSORED_PREIMAGE = Buffer.alloc(6 * 32);
const TOKEN_PREIMAGE = Buffer.alloc(10 * 32);
const PACKED_OP_PREIMAGE = Buffer.alloc(10 * 32);
const USER_OP_HASH_PREIMAGE = Buffer.alloc(3 * 32);

/**
 * keccak256(abi.encode(sender, nonce, keccak256(initCode), keccak256(callData), callGasLimit,
 * verificationGasLimit, preVerificationGas, maxFeePerGas, maxPriorityFeePerGas)): the contract's `_opHash`,
 * shared by every mode.
 */
export function opHashV06(userOp: HashedFieldsV06, keccak: Keccak): Uint8Array {
  return keccak.keccak256(writeOpWords(OP_PREIMAGE, userOp, keccak));
}

/** The op's nine words (the paymaster's `_opHash` preimage, and the EntryPoint's pack without its last word). */
function writeOpWords(into: Buffer, userOp: HashedFieldsV06, keccak: Keccak): Buffer {
  const buf = into.fill(0);
  writeAddressWord(buf, 0, userOp.sender, 'sender');
  writeUint256Word(buf, 32, userOp.nonce, 'nonce');
  buf.set(keccakOfHex(keccak, userOp.initCode, 'initCode'), 64);
  buf.set(keccakOfHex(keccak, userOp.callData, 'callData'), 96);
  writeUint256Word(buf, 128, userOp.callGasLimit, 'callGasLimit');
  writeUint256Word(buf, 160, userOp.verificationGasLimit, 'verificationGasLimit');
  writeUint256Word(buf, 192, userOp.preVerificationGas, 'preVerificationGas');
  writeUint256Word(buf, 224, userOp.maxFeePerGas, 'maxFeePerGas');
  writeUint256Word(buf, 256, userOp.maxPriorityFeePerGas, 'maxPriorityFeePerGas');
  return buf;
}

/**
 * EntryPoint v0.6's `getUserOpHash`: keccak256(abi.encode(keccak256(pack(op)), entryPoint, chainId)), where
 * pack(op) is the words of `opHashV06` followed by keccak256(paymasterAndData) (UserOperationLib.pack). It is the
 * key of the EntryPoint's UserOperationEvent, so the spend ledger keys reservations by it and settlement finds
 * them from the event.
 */
export function userOpHashV06(
  args: {
    readonly userOp: HashedFieldsV06 & { readonly paymasterAndData: Hex };
    readonly entryPoint: Address;
    readonly chainId: number;
  },
  keccak: Keccak = viemKeccak,
): Hex {
  const op = args.userOp;
  const buf = writeOpWords(PACKED_OP_PREIMAGE, op, keccak);
  buf.set(keccak.keccak256(hexToBuffer(op.paymasterAndData, 'paymasterAndData')), 288);
  const packed = keccak.keccak256(buf);
  const outer = USER_OP_HASH_PREIMAGE.fill(0);
  outer.set(packed, 0);
  writeAddressWord(outer, 32, args.entryPoint, 'entryPoint');
  writeUint256Word(outer, 64, BigInt(args.chainId), 'chainId');
  return `0x${Buffer.from(keccak.keccak256(outer)).toString('hex')}`;
}

export interface SponsoredHashParams {
  readonly userOp: HashedFieldsV06;
  readonly chainId: bigint;
  readonly paymaster: Address;
  /** Unix seconds; 0 means no expiry (ERC-4337 validationData convention). */
  readonly validUntil: number;
  readonly validAfter: number;
}

/**
 * keccak256(abi.encode(opHash, chainId, paymaster, uint8 mode, uint48 validUntil, uint48 validAfter)): the
 * contract's `getSponsoredHash`. The verifying signer signs its EIP-191 digest (see `eip191Digest`).
 */
export function sponsoredHashV06(params: SponsoredHashParams, keccak: Keccak): Uint8Array {
  return keccak.keccak256(writeCommonWords(SPONSORED_PREIMAGE, params, MODE_SPONSORED, keccak));
}

/**
 * The six words both modes' hashes start with (opHash, chainId, paymaster, mode, validUntil, validAfter), written
 * into `buf` after zeroing it; the mode's own words follow from byte 192.
 */
function writeCommonWords(buf: Buffer, params: SponsoredHashParams, mode: number, keccak: Keccak): Buffer {
  checkUint48(params.validUntil, 'validUntil');
  checkUint48(params.validAfter, 'validAfter');
  const opHash = opHashV06(params.userOp, keccak);
  buf.fill(0);
  buf.set(opHash, 0);
  writeUint256Word(buf, 32, params.chainId, 'chainId');
  writeAddressWord(buf, 64, params.paymaster, 'paymaster');
  buf[127] = mode;
  buf.writeUIntBE(params.validUntil, 160 - 6, 6);
  buf.writeUIntBE(params.validAfter, 192 - 6, 6);
  return buf;
}

function checkTokenFields(f: TokenPaymasterFields): void {
  if (f.exchangeRate < 0n || f.exchangeRate > MAX_UINT128) throw new ValidationError('exchangeRate must fit uint128');
  if (f.maxTokenCost < 0n || f.maxTokenCost > MAX_UINT128) throw new ValidationError('maxTokenCost must fit uint128');
  if (!Number.isSafeInteger(f.priceMarkup) || f.priceMarkup < 0 || f.priceMarkup > MAX_UINT32) {
    throw new ValidationError('priceMarkup must be an integer in the uint32 range');
  }
  if (f.permit !== undefined) throw new ValidationError('PatronPaymaster (v0.6) has no permit mode');
}

/**
 * keccak256(abi.encode(opHash, chainId, paymaster, uint8 mode (1 or 2), uint48 validUntil, uint48 validAfter, token,
 * uint128 exchangeRate, uint32 priceMarkup, uint128 maxTokenCost)): the contract's `getTokenHash`.
 */
export function tokenHashV06(params: SponsoredHashParams & TokenPaymasterFields, keccak: Keccak): Uint8Array {
  const buf = writeCommonWords(TOKEN_PREIMAGE, params, tokenModeOf(params), keccak);
  checkTokenFields(params);
  writeAddressWord(buf, 192, params.token, 'token');
  writeUint256Word(buf, 224, params.exchangeRate, 'exchangeRate');
  buf.writeUInt32BE(params.priceMarkup, 288 - 4);
  writeUint256Word(buf, 288, params.maxTokenCost, 'maxTokenCost');
  return keccak.keccak256(buf);
}

export interface SponsoredPaymasterData {
  readonly paymaster: Address;
  readonly validUntil: number;
  readonly validAfter: number;
  /** r || s || v, 65 bytes. */
  readonly signature: Uint8Array;
}

export function encodeSponsoredPaymasterAndData(data: SponsoredPaymasterData): Hex {
  checkUint48(data.validUntil, 'validUntil');
  checkUint48(data.validAfter, 'validAfter');
  if (data.signature.length !== SIGNATURE_LENGTH) throw new ValidationError('signature must be 65 bytes (r||s||v)');
  const buf = Buffer.alloc(SPONSORED_PAYMASTER_AND_DATA_LENGTH);
  if (data.paymaster.length !== 42 || buf.write(data.paymaster.slice(2), 0, 20, 'hex') !== 20) {
    throw new ValidationError('paymaster must be an address');
  }
  buf[MODE_OFFSET] = MODE_SPONSORED;
  buf.writeUIntBE(data.validUntil, VALID_UNTIL_OFFSET, 6);
  buf.writeUIntBE(data.validAfter, VALID_AFTER_OFFSET, 6);
  buf.set(data.signature, SIGNATURE_OFFSET);
  return `0x${buf.toString('hex')}`;
}

export type TokenPaymasterData = SponsoredPaymasterData & TokenPaymasterFields;

export function encodeTokenPaymasterAndData(data: TokenPaymasterData): Hex {
  checkUint48(data.validUntil, 'validUntil');
  checkUint48(data.validAfter, 'validAfter');
  checkTokenFields(data);
  if (data.signature.length !== SIGNATURE_LENGTH) throw new ValidationError('signature must be 65 bytes (r||s||v)');
  const buf = Buffer.alloc(TOKEN_PAYMASTER_AND_DATA_LENGTH);
  if (data.paymaster.length !== 42 || buf.write(data.paymaster.slice(2), 0, 20, 'hex') !== 20) {
    throw new ValidationError('paymaster must be an address');
  }
  buf[MODE_OFFSET] = tokenModeOf(data);
  buf.writeUIntBE(data.validUntil, VALID_UNTIL_OFFSET, 6);
  buf.writeUIntBE(data.validAfter, VALID_AFTER_OFFSET, 6);
  if (data.token.length !== 42 || buf.write(data.token.slice(2), TOKEN_OFFSET, 20, 'hex') !== 20) {
    throw new ValidationError('token must be an address');
  }
  buf.writeBigUInt64BE(data.exchangeRate >> 64n, RATE_OFFSET);
  buf.writeBigUInt64BE(BigInt.asUintN(64, data.exchangeRate), RATE_OFFSET + 8);
  buf.writeUInt32BE(data.priceMarkup, MARKUP_OFFSET);
  buf.writeBigUInt64BE(data.maxTokenCost >> 64n, MAX_COST_OFFSET);
  buf.writeBigUInt64BE(BigInt.asUintN(64, data.maxTokenCost), MAX_COST_OFFSET + 8);
  buf.set(data.signature, TOKEN_SIGNATURE_OFFSET);
  return `0x${buf.toString('hex')}`;
}

/** A decoded `paymasterAndData` of either mode. */
export type PatronPaymasterDataV06 =
  | (SponsoredPaymasterData & { readonly mode: typeof MODE_SPONSORED })
  | (TokenPaymasterData & { readonly mode: typeof MODE_TOKEN });

/** Parses Patron `paymasterAndData`, rejecting what the contract would revert on (unknown mode, bad length). */
export function decodePaymasterAndData(paymasterAndData: Hex): PatronPaymasterDataV06 {
  const buf = hexToBuffer(paymasterAndData, 'paymasterAndData');
  if (buf.length <= MODE_OFFSET) throw new ValidationError('paymasterAndData is too short to carry a mode');
  const mode = buf[MODE_OFFSET];
  if (mode === MODE_TOKEN || mode === MODE_TOKEN_GUARANTEED) return decodeTokenPaymasterAndData(buf);
  if (mode !== MODE_SPONSORED) throw new ValidationError(`unknown paymaster mode ${String(mode)}`);
  if (buf.length !== SPONSORED_PAYMASTER_AND_DATA_LENGTH) {
    throw new ValidationError(
      `sponsored paymasterAndData must be ${SPONSORED_PAYMASTER_AND_DATA_LENGTH} bytes, got ${buf.length}`,
    );
  }
  return {
    paymaster: getAddress(`0x${buf.toString('hex', 0, 20)}`),
    mode,
    validUntil: buf.readUIntBE(VALID_UNTIL_OFFSET, 6),
    validAfter: buf.readUIntBE(VALID_AFTER_OFFSET, 6),
    signature: new Uint8Array(buf.subarray(SIGNATURE_OFFSET)),
  };
}

function decodeTokenPaymasterAndData(buf: Buffer): TokenPaymasterData & { readonly mode: typeof MODE_TOKEN } {
  if (buf.length !== TOKEN_PAYMASTER_AND_DATA_LENGTH) {
    throw new ValidationError(
      `token paymasterAndData must be ${TOKEN_PAYMASTER_AND_DATA_LENGTH} bytes, got ${buf.length}`,
    );
  }
  const uint128At = (offset: number) => (buf.readBigUInt64BE(offset) << 64n) | buf.readBigUInt64BE(offset + 8);
  return {
    paymaster: getAddress(`0x${buf.toString('hex', 0, 20)}`),
    mode: MODE_TOKEN,
    validUntil: buf.readUIntBE(VALID_UNTIL_OFFSET, 6),
    validAfter: buf.readUIntBE(VALID_AFTER_OFFSET, 6),
    token: getAddress(`0x${buf.toString('hex', TOKEN_OFFSET, RATE_OFFSET)}`),
    exchangeRate: uint128At(RATE_OFFSET),
    priceMarkup: buf.readUInt32BE(MARKUP_OFFSET),
    maxTokenCost: uint128At(MAX_COST_OFFSET),
    ...(buf[MODE_OFFSET] === MODE_TOKEN_GUARANTEED ? { guaranteed: true } : {}),
    signature: new Uint8Array(buf.subarray(TOKEN_SIGNATURE_OFFSET)),
  };
}
