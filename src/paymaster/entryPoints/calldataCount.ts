/**
 * The size of a user operation's ABI encoding in `handleOps` calldata, and how many of its bytes are not zero,
 * counted without building the encoding. preVerificationGas is priced per calldata byte (4 gas a zero byte, 16 any
 * other; EIP-2028), and Patron computes it (and bounds the caller's by it) on every sponsored request: an ABI encode
 * and a byte loop cost ~30 µs per op, these counts a few (the unit tests hold them to viem's encoder byte for byte).
 *
 * Both encodings are the op's tuple as `handleOps(ops[], beneficiary)` carries it: a head of one word per field (a
 * dynamic `bytes` field's word is its offset) and, per `bytes` field in order, a length word and the data padded to
 * whole words with zeros.
 */
export interface CalldataCount {
  /** Bytes of the encoding (a multiple of 32). */
  readonly bytes: number;
  /** Of those, the non-zero ones. */
  readonly nonZero: number;
}

const ZERO = 48; // '0'

/** Bytes of a 0x-prefixed hex string (even length, as every hex Patron handles is by then). */
export const hexSize = (hex: string): number => (hex.length - 2) >>> 1;

/** Non-zero byte pairs of hex digits from `start` (an even-length run). */
function pairsNonZero(hex: string, start: number): number {
  let n = 0;
  for (let i = start; i < hex.length; i += 2) {
    if (hex.charCodeAt(i) !== ZERO || hex.charCodeAt(i + 1) !== ZERO) n++;
  }
  return n;
}

/** Non-zero bytes of a 0x-prefixed hex string, in any letter case. */
export const hexNonZero = (hex: string): number => pairsNonZero(hex, 2);

/** Non-zero bytes of an unsigned integer's 32-byte word. */
export function uintNonZero(value: bigint | number): number {
  if (typeof value === 'number') {
    let n = 0;
    for (let v = value; v > 0; v = Math.floor(v / 256)) if (v % 256 !== 0) n++;
    return n;
  }
  if (value === 0n) return 0;
  const digits = value.toString(16);
  // An odd count of digits: the first byte is the lone leading digit, which is not zero.
  return digits.length % 2 === 0 ? pairsNonZero(digits, 0) : 1 + pairsNonZero(digits, 1);
}

const padded = (size: number): number => Math.ceil(size / 32) * 32;

/**
 * The tail of a tuple's `bytes` fields and the head words pointing at them: each field is given by its size and
 * non-zero bytes. `headWords` is the number of words of the whole head (static fields and offsets); the offsets'
 * own bytes are counted here, the static words' by the caller.
 */
export function dynamicFields(headWords: number, fields: readonly CalldataCount[]): CalldataCount {
  let offset = headWords * 32;
  let bytes = 0;
  let nonZero = 0;
  for (const f of fields) {
    nonZero += uintNonZero(offset) + uintNonZero(f.bytes) + f.nonZero;
    const size = 32 + padded(f.bytes);
    bytes += 32 + size; // the offset word in the head, the length word and the padded data in the tail
    offset += size;
  }
  return { bytes, nonZero };
}

/** A `bytes` field from its hex: its size and its non-zero bytes. */
export const bytesField = (hex: string): CalldataCount => ({ bytes: hexSize(hex), nonZero: hexNonZero(hex) });

/** A `bytes` field priced as all non-zero (0xff), as bundlers price data they cannot know yet (a signature). */
export const onesField = (size: number): CalldataCount => ({ bytes: size, nonZero: size });

/** The calldata gas of a count: 4 per byte, 12 more per non-zero byte. */
export const calldataCost = (c: CalldataCount): bigint => BigInt(4 * c.bytes + 12 * c.nonZero);
