import { createRequire } from 'node:module';
import { secp256k1 } from '@noble/curves/secp256k1';
import { hexToBytes, keccak256 as viemKeccak256 } from 'viem';

/**
 * Hashing and signing behind one small interface, so the hot path uses the fastest implementation that loads
 * here. Measured on this machine kind: a signature with noble (pure JS, what viem uses) costs ~370 µs of CPU,
 * the native `secp256k1` addon ~30 µs. Both npm addons fall back to JavaScript *silently* when their native
 * part fails to load, so the native backend requires their `bindings` entry points directly (which throw
 * instead of falling back), and the active backend is reported at start-up and on /readyz.
 */
export interface CryptoBackend {
  readonly name: 'native' | 'js';
  keccak256(data: Uint8Array): Uint8Array;
  /** ECDSA over a 32-byte digest; returns r || s || v (65 bytes, v = 27 or 28), low-s, RFC 6979 nonces. */
  signDigest(digest: Uint8Array, privateKey: Uint8Array): Uint8Array;
}

function toRsv(r: Uint8Array, s: Uint8Array, recovery: number): Uint8Array {
  const out = new Uint8Array(65);
  out.set(r, 32 - r.length);
  out.set(s, 64 - s.length);
  out[64] = 27 + recovery;
  return out;
}

export const jsCryptoBackend: CryptoBackend = {
  name: 'js',
  keccak256: (data) => hexToBytes(viemKeccak256(data)),
  signDigest(digest, privateKey) {
    const sig = secp256k1.sign(digest, privateKey, { lowS: true });
    const compact = sig.toCompactRawBytes();
    return toRsv(compact.subarray(0, 32), compact.subarray(32, 64), sig.recovery);
  },
};

interface NativeSecp256k1 {
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
}
type NativeKeccakFactory = (algorithm: 'keccak256') => { update(data: Uint8Array): { digest(): Buffer } };

/** The native backend, or undefined when either addon does not load. */
export function loadNativeCryptoBackend(): CryptoBackend | undefined {
  const require = createRequire(import.meta.url);
  let secp: NativeSecp256k1;
  let createKeccak: NativeKeccakFactory;
  try {
    secp = require('secp256k1/bindings') as NativeSecp256k1;
    createKeccak = require('keccak/bindings') as NativeKeccakFactory;
  } catch {
    return undefined;
  }
  return {
    name: 'native',
    // The addon accepts Buffers only; wrapping shares memory, no copy.
    keccak256: (data) =>
      createKeccak('keccak256')
        .update(Buffer.from(data.buffer, data.byteOffset, data.byteLength))
        .digest(),
    signDigest(digest, privateKey) {
      const { signature, recid } = secp.ecdsaSign(digest, privateKey);
      return toRsv(signature.subarray(0, 32), signature.subarray(32, 64), recid);
    },
  };
}

const SELF_CHECK_KEY = hexToBytes('0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318');

/**
 * The native backend when it loads *and* agrees with the JS reference on a known vector (a broken build must
 * never sign garbage), else the JS backend; with the reason, for the start-up log and /readyz.
 */
export function selectCryptoBackend(): { backend: CryptoBackend; reason: string } {
  const native = loadNativeCryptoBackend();
  if (native === undefined) return { backend: jsCryptoBackend, reason: 'native secp256k1/keccak addons did not load' };
  const message = new TextEncoder().encode('patron crypto self-check');
  const digest = jsCryptoBackend.keccak256(message);
  const agrees =
    Buffer.from(native.keccak256(message)).equals(Buffer.from(digest)) &&
    Buffer.from(native.signDigest(digest, SELF_CHECK_KEY)).equals(
      Buffer.from(jsCryptoBackend.signDigest(digest, SELF_CHECK_KEY)),
    );
  if (!agrees) return { backend: jsCryptoBackend, reason: 'native addons loaded but failed the self-check' };
  return { backend: native, reason: 'native secp256k1 and keccak addons loaded and passed the self-check' };
}
