import { type Address, bytesToHex, getAddress } from 'viem';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';

/**
 * What a remote key (a PKCS#11 token, AWS KMS) returns is a bare ECDSA (r, s), in DER or as r ‖ s, with s high or
 * low at the device's whim and no recovery id. Ethereum wants r ‖ s ‖ v with s in the lower half of the order
 * (EIP-2; OpenZeppelin's ECDSA.recover refuses a high s) and v = 27 + the recovery id. These helpers make one of
 * the other, and read the key's public point from the two encodings the back ends use (SubjectPublicKeyInfo,
 * CKA_EC_POINT).
 */

/** The order n of secp256k1's group. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N >> 1n;

/** secp256k1's OID (1.3.132.0.10), DER-encoded: what CKA_EC_PARAMS holds and what an SPKI names. */
export const SECP256K1_OID_DER = Uint8Array.from([0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x0a]);

export class SignatureFormatError extends Error {
  override readonly name = 'SignatureFormatError';
}

interface Tlv {
  readonly tag: number;
  /** The value's first byte and the byte after it. */
  readonly start: number;
  readonly end: number;
}

/** One DER tag-length-value at `offset` (definite lengths of up to 4 bytes, which is all a key or signature uses). */
function readTlv(der: Uint8Array, offset: number): Tlv {
  const tag = der[offset];
  let length = der[offset + 1];
  if (tag === undefined || length === undefined) throw new SignatureFormatError('truncated DER');
  let start = offset + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4) throw new SignatureFormatError('unsupported DER length');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + (der[start + i] ?? 0);
    start += bytes;
  }
  const end = start + length;
  if (end > der.length) throw new SignatureFormatError('truncated DER');
  return { tag, start, end };
}

const toBigInt = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt(bytesToHex(bytes)));

/** An ECDSA-Sig-Value (RFC 3279: SEQUENCE { r INTEGER, s INTEGER }), what KMS's Sign returns. */
export function rsFromDer(der: Uint8Array): { r: bigint; s: bigint } {
  const seq = readTlv(der, 0);
  if (seq.tag !== 0x30) throw new SignatureFormatError('an ECDSA signature must be a DER SEQUENCE');
  const r = readTlv(der, seq.start);
  const s = readTlv(der, r.end);
  if (r.tag !== 0x02 || s.tag !== 0x02 || s.end !== seq.end) {
    throw new SignatureFormatError('an ECDSA signature must be SEQUENCE { INTEGER r, INTEGER s }');
  }
  return { r: toBigInt(der.subarray(r.start, r.end)), s: toBigInt(der.subarray(s.start, s.end)) };
}

/** r ‖ s, 32 bytes each (PKCS#11's CKM_ECDSA output on a 256-bit curve). */
export function rsFromRaw(raw: Uint8Array): { r: bigint; s: bigint } {
  if (raw.length !== 64) throw new SignatureFormatError(`expected a 64-byte r ‖ s signature, got ${raw.length} bytes`);
  return { r: toBigInt(raw.subarray(0, 32)), s: toBigInt(raw.subarray(32, 64)) };
}

function word(value: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(value.toString(16).padStart(64, '0'), 'hex'));
}

/**
 * r ‖ s ‖ v for Ethereum from a device's (r, s): s made low (n − s, which is the same signature's other form) and
 * v found by recovering the candidates (0, then 1) and keeping the one whose public key is the signer's. Ids 2
 * and 3 (r ≥ n − p) occur with probability ~2^-128 and are not tried; such a signature is refused.
 */
export function ethereumSignature(args: {
  readonly digest: Uint8Array;
  readonly r: bigint;
  readonly s: bigint;
  /** The signer's uncompressed public key, 0x04 ‖ x ‖ y. */
  readonly publicKey: Uint8Array;
  readonly crypto: CryptoBackend;
}): Uint8Array {
  const { r, digest } = args;
  if (r <= 0n || r >= N || args.s <= 0n || args.s >= N) throw new SignatureFormatError('r or s out of range');
  const s = args.s > HALF_N ? N - args.s : args.s;
  const out = new Uint8Array(65);
  out.set(word(r), 0);
  out.set(word(s), 32);
  const rs = out.subarray(0, 64);
  const expected = Buffer.from(args.publicKey);
  for (const recovery of [0, 1]) {
    const recovered = args.crypto.recoverPublicKey({ digest, rs, recovery });
    if (recovered !== undefined && expected.equals(recovered)) {
      out[64] = 27 + recovery;
      return out;
    }
  }
  throw new SignatureFormatError(
    'the signature does not recover to the signer key: the device signed with another key',
  );
}

function uncompressedPoint(point: Uint8Array, what: string): Uint8Array {
  if (point.length !== 65 || point[0] !== 0x04) {
    throw new SignatureFormatError(`${what}: expected an uncompressed secp256k1 point (65 bytes starting 0x04)`);
  }
  return Uint8Array.from(point);
}

/**
 * The public key of a DER SubjectPublicKeyInfo (RFC 5480; KMS's GetPublicKey): SEQUENCE { SEQUENCE { id-ecPublicKey,
 * namedCurve }, BIT STRING point }, the curve checked to be secp256k1.
 */
export function publicKeyFromSpki(der: Uint8Array): Uint8Array {
  const spki = readTlv(der, 0);
  const algorithm = readTlv(der, spki.start);
  if (spki.tag !== 0x30 || algorithm.tag !== 0x30) throw new SignatureFormatError('not a SubjectPublicKeyInfo');
  const keyType = readTlv(der, algorithm.start);
  const curve = der.subarray(keyType.end, algorithm.end);
  if (!Buffer.from(curve).equals(SECP256K1_OID_DER)) {
    throw new SignatureFormatError('the key is not on secp256k1 (an AWS KMS key must have the spec ECC_SECG_P256K1)');
  }
  const bits = readTlv(der, algorithm.end);
  if (bits.tag !== 0x03 || der[bits.start] !== 0) throw new SignatureFormatError('malformed public key BIT STRING');
  return uncompressedPoint(der.subarray(bits.start + 1, bits.end), 'SubjectPublicKeyInfo');
}

/** CKA_EC_POINT: a DER OCTET STRING around the point (PKCS#11 2.40), or, from some tokens, the bare point. */
export function publicKeyFromEcPoint(value: Uint8Array): Uint8Array {
  if (value.length === 65) return uncompressedPoint(value, 'CKA_EC_POINT');
  const octets = readTlv(value, 0);
  if (octets.tag !== 0x04) throw new SignatureFormatError('CKA_EC_POINT is not an OCTET STRING');
  return uncompressedPoint(value.subarray(octets.start, octets.end), 'CKA_EC_POINT');
}

/** The Ethereum address of an uncompressed public key: the last 20 bytes of keccak256(x ‖ y). */
export function addressOfPublicKey(publicKey: Uint8Array, crypto: CryptoBackend): Address {
  const hash = crypto.keccak256(uncompressedPoint(publicKey, 'public key').subarray(1));
  return getAddress(bytesToHex(hash.subarray(12)));
}
