import { keccak256 } from 'viem';
import { ValidationError } from '../../errors/PatronError.js';

/**
 * The ABI words both paymaster codecs (v06/patronPaymasterV06.ts, v07/patronPaymasterV07.ts) write into their
 * preallocated preimage buffers, the keccak they hash them with, and the EIP-191 digest the signer signs.
 */

const MAX_UINT48 = 2 ** 48 - 1;
const MAX_UINT64 = (1n << 64n) - 1n;
const MAX_UINT256 = (1n << 256n) - 1n;
const EIP191_PREFIX = Buffer.from('\x19Ethereum Signed Message:\n32', 'latin1');
const EIP191_PREIMAGE = Buffer.alloc(EIP191_PREFIX.length + 32);
EIP191_PREFIX.copy(EIP191_PREIMAGE, 0);

/**
 * The hash function is injected so the hot path can use the native addon and tests the JS reference. It must
 * not keep `data` after it returns: the preimages below are written into buffers reused by the next call.
 */
export interface Keccak {
  keccak256(data: Uint8Array): Uint8Array;
  /** keccak256 of the bytes 0x-hex `hex` holds, remembered by a hasher that keeps them (memoKeccak). */
  hexKeccak?(hex: string, field: string): Uint8Array;
}

export const viemKeccak: Keccak = { keccak256: (data) => keccak256(data, 'bytes') };

/** keccak256 of the bytes `hex` holds: from the hasher's memo when it keeps one, else decoded and hashed. */
export function keccakOfHex(keccak: Keccak, hex: string, field: string): Uint8Array {
  return keccak.hexKeccak?.(hex, field) ?? keccak.keccak256(hexToBuffer(hex, field));
}

/**
 * A hasher for one signature: the paymaster's hash and the EntryPoint's userOpHash of the same op both hash its
 * callData (and on v0.6 its initCode), the second often much later; this keeps each such hash of exact bytes, by
 * the field's hex string, for the signature's life (a few entries). Only hashes of the bytes as given: a hash of
 * anything derived from them (v0.7's EIP-7702 initCode with its delegate) is never remembered under the field.
 */
export function memoKeccak(keccak: Keccak): Keccak {
  const memo = new Map<string, Uint8Array>();
  return {
    keccak256: (data) => keccak.keccak256(data),
    hexKeccak(hex, field) {
      let hash = memo.get(hex);
      if (hash === undefined) {
        hash = keccak.keccak256(hexToBuffer(hex, field));
        memo.set(hex, hash);
      }
      return hash;
    },
  };
}

/** Decodes 0x-hex strictly (Buffer's decoder silently stops at the first bad character, so count bytes). */
export function hexToBuffer(hex: string, field: string): Buffer {
  if (!hex.startsWith('0x') || hex.length % 2 !== 0) throw new ValidationError(`${field} must be 0x-prefixed hex`);
  const out = Buffer.from(hex.slice(2), 'hex');
  if (out.length * 2 !== hex.length - 2) throw new ValidationError(`${field} must be 0x-prefixed hex`);
  return out;
}

/** Writes a 20-byte address right-aligned in the 32-byte word at `offset` (the buffer is zero-filled). */
export function writeAddressWord(buf: Buffer, offset: number, address: string, field: string): void {
  if (address.length !== 42 || !address.startsWith('0x')) throw new ValidationError(`${field} must be an address`);
  if (buf.write(address.slice(2), offset + 12, 20, 'hex') !== 20) {
    throw new ValidationError(`${field} must be an address`);
  }
}

/** Writes a uint256 big-endian as four 64-bit limbs; most values (gas, nonce) fit the first limb. */
export function writeUint256Word(buf: Buffer, offset: number, value: bigint, field: string): void {
  if (value < 0n || value > MAX_UINT256) throw new ValidationError(`${field} is out of the uint256 range`);
  if (value <= MAX_UINT64) {
    buf.writeBigUInt64BE(value, offset + 24);
    return;
  }
  for (let limb = 3; limb >= 0; limb--) {
    buf.writeBigUInt64BE(BigInt.asUintN(64, value), offset + limb * 8);
    value >>= 64n;
  }
}

export function checkUint48(value: number, field: string): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_UINT48) {
    throw new ValidationError(`${field} must be an integer in the uint48 range`);
  }
}

/** keccak256("\x19Ethereum Signed Message:\n32" || hash), what OpenZeppelin's toEthSignedMessageHash computes. */
export function eip191Digest(hash: Uint8Array, keccak: Keccak): Uint8Array {
  if (hash.length !== 32) throw new ValidationError('the hash to sign must be 32 bytes');
  EIP191_PREIMAGE.set(hash, EIP191_PREFIX.length);
  return keccak.keccak256(EIP191_PREIMAGE);
}
