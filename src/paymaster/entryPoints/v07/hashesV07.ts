import { type Address, type Hex, keccak256, stringToBytes } from 'viem';
import { isEip7702InitCode } from '../../../chain/eip7702InitCode.js';
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
import { MODE_SPONSORED, type TokenPaymasterFields, type TokenPermit, tokenModeOf } from '../paymasterModes.js';
import {
  checkCaps,
  checkTokenFields,
  type EntryPointVersionV07,
  type GasCapsV07,
  type HashedFieldsV07,
  MAGIC,
  MIN_SUFFIXED_LENGTH,
  type PackedUserOperationV07,
  SUFFIX_TAIL_LENGTH,
  type UnsignedUserOperationV07,
  type UserOperationV07,
  uint128PairHex,
  writeUint128Pair,
} from './patronPaymasterV07.js';

/**
 * PatronPaymasterV07's digests (the contract's `getSponsoredHash` / `getTokenHash`) and the EntryPoints' userOpHash
 * (v0.7 plain, v0.8 EIP-712, v0.9 with the paymasterSignature suffix left out), written into preallocated buffers on
 * the request path; the layout they hash is patronPaymasterV07.ts, the unit tests pin both to viem's encoder.
 */

/**
 * Preimage buffers, reused: every function below fills one completely (zeroes first) and hashes it before
 * returning, all synchronously, so calls never see each other's bytes (patronPaymasterV06.ts does the same).
 */
const OP_PREIMAGE = Buffer.alloc(9 * 32);
const SPONSORED_PREIMAGE = Buffer.alloc(7 * 32);
const TOKEN_PREIMAGE = Buffer.alloc(11 * 32);
const PERMIT_PREIMAGE = Buffer.alloc(3 * 32);
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
  buf.set(keccakOfHex(keccak, userOp.callData, 'callData'), 96);
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

/**
 * keccak256(abi.encode(opHash, chainId, paymaster, entryPoint, uint8 mode (1, 2 or 3), validUntil, validAfter, token,
 * uint128 exchangeRate, uint32 priceMarkup, uint128 maxTokenCost)): the contract's `getTokenHash`; with a permit
 * (mode 3), that hash bound to the permit as the contract's `getPermitHash` does (permitHashV07).
 */
export function tokenHashV07(params: SponsoredHashParamsV07 & TokenPaymasterFields, keccak: Keccak): Uint8Array {
  const buf = writeCommonWords(TOKEN_PREIMAGE, params, tokenModeOf(params), keccak);
  checkTokenFields(params);
  writeAddressWord(buf, 224, params.token, 'token');
  writeUint256Word(buf, 256, params.exchangeRate, 'exchangeRate');
  buf.writeUInt32BE(params.priceMarkup, 320 - 4);
  writeUint256Word(buf, 320, params.maxTokenCost, 'maxTokenCost');
  const hash = keccak.keccak256(buf);
  return params.permit === undefined ? hash : permitHashV07(hash, params.permit, keccak);
}

/** keccak256(abi.encode(tokenHash, uint256 permitValue, keccak256(permitSignature))): the contract's `getPermitHash`. */
export function permitHashV07(tokenHash: Uint8Array, permit: TokenPermit, keccak: Keccak): Uint8Array {
  const buf = PERMIT_PREIMAGE.fill(0);
  buf.set(tokenHash, 0);
  writeUint256Word(buf, 32, permit.value, 'permit.value');
  buf.set(keccakOfHex(keccak, permit.signature, 'permit.signature'), 64);
  return keccak.keccak256(buf);
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
  buf.set(keccakOfHex(keccak, op.callData, 'callData'), at + 96);
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
