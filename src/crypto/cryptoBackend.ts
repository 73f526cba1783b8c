import { createRequire } from 'node:module';
import path from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { hexToBytes, keccak256 as viemKeccak256 } from 'viem';

/**
 * Hashing and signing behind one small interface, so the hot path uses the fastest implementation that loads
 * here. Measured on this machine kind (`npm run bench:hash-sign`): a signature with noble (pure JS, what viem
 * uses) costs ~370-480 µs of CPU, the native `secp256k1` addon ~55 µs; a keccak256 of a few hundred bytes
 * ~30-90 µs in JS, ~11 µs through the `keccak` package's API (it builds a Transform stream per hash) and ~3 µs
 * on one reused native sponge. Both npm addons fall back to JavaScript *silently* when their native part fails
 * to load, so the native backend loads their native parts directly (which throws instead of falling back), and
 * the active backend is reported at start-up and on /readyz.
 */
export interface CryptoBackend {
  readonly name: 'native' | 'js';
  keccak256(data: Uint8Array): Uint8Array;
  /** ECDSA over a 32-byte digest; returns r || s || v (65 bytes, v = 27 or 28), low-s, RFC 6979 nonces. */
  signDigest(digest: Uint8Array, privateKey: Uint8Array): Uint8Array;
  /**
   * The uncompressed public key (65 bytes, 0x04 ‖ x ‖ y) that signed `digest` with r ‖ s (64 bytes) and this recovery
   * id, or undefined when none did. Remote signers (PKCS#11, KMS) return r and s only; this finds their v.
   */
  recoverPublicKey(args: { digest: Uint8Array; rs: Uint8Array; recovery: number }): Uint8Array | undefined;
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
  keccak256: (data) => viemKeccak256(data, 'bytes'),
  signDigest(digest, privateKey) {
    // noble 2: `prehash: false` signs the digest as given (its default hashes it again); 'recovered' is
    // recovery || r || s.
    const sig = secp256k1.sign(digest, privateKey, { prehash: false, lowS: true, format: 'recovered' });
    return toRsv(sig.subarray(1, 33), sig.subarray(33, 65), sig[0] ?? 0);
  },
  recoverPublicKey({ digest, rs, recovery }) {
    try {
      const sig = secp256k1.Signature.fromBytes(rs, 'compact').addRecoveryBit(recovery);
      return sig.recoverPublicKey(digest).toBytes(false);
    } catch {
      return undefined;
    }
  },
};

interface NativeSecp256k1 {
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
  /** libsecp256k1's public key recovery (uncompressed: 65 bytes); throws when the signature recovers no key. */
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
}

/** The `keccak` addon's sponge (XKCP KeccakWidth1600), without the package's stream wrapper around it. */
interface NativeKeccakSponge {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  /** Pads (Keccak's 0x01 suffix) on the first call, then returns `length` new bytes. */
  squeeze(length: number): Buffer;
}
type NativeKeccakSpongeClass = new () => NativeKeccakSponge;

/** Keccak-256: rate 1088 bits, capacity 512 bits, no SHA-3 domain suffix (what `keccak('keccak256')` sets up). */
const KECCAK256_RATE = 1088;
const KECCAK256_CAPACITY = 512;

/**
 * Loads the sponge class the way `keccak/bindings.js` does (node-gyp-build on the package directory, resolved
 * from the package itself), or throws. `keccak/bindings` would wrap every hash in a Transform stream.
 */
function loadKeccakSponge(require: NodeJS.Require): NativeKeccakSpongeClass {
  const packageJson = require.resolve('keccak/package.json');
  const nodeGypBuild = createRequire(packageJson)('node-gyp-build') as (dir: string) => unknown;
  const addon = nodeGypBuild(path.dirname(packageJson));
  if (typeof addon !== 'function') throw new Error('the keccak native addon did not load');
  return addon as NativeKeccakSpongeClass;
}

/** The native backend, or undefined when either addon does not load. */
export function loadNativeCryptoBackend(): CryptoBackend | undefined {
  const require = createRequire(import.meta.url);
  let secp: NativeSecp256k1;
  let Sponge: NativeKeccakSpongeClass;
  try {
    secp = require('secp256k1/bindings') as NativeSecp256k1;
    Sponge = loadKeccakSponge(require);
  } catch {
    return undefined;
  }
  // One sponge, re-initialised per hash: every call runs to completion synchronously, so calls never interleave
  // (each worker thread loads its own copy of this module). squeeze() returns a new Buffer each time.
  const sponge = new Sponge();
  return {
    name: 'native',
    keccak256(data) {
      sponge.initialize(KECCAK256_RATE, KECCAK256_CAPACITY);
      // The addon accepts Buffers only; wrapping shares memory, no copy.
      sponge.absorb(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      return sponge.squeeze(32);
    },
    signDigest(digest, privateKey) {
      const { signature, recid } = secp.ecdsaSign(digest, privateKey);
      return toRsv(signature.subarray(0, 32), signature.subarray(32, 64), recid);
    },
    recoverPublicKey({ digest, rs, recovery }) {
      try {
        return secp.ecdsaRecover(rs, recovery, digest, false);
      } catch {
        return undefined;
      }
    },
  };
}

/** Both backends recover the same public key from the self-check's signature. */
function recoversAlike(native: CryptoBackend, digest: Uint8Array): boolean {
  const sig = jsCryptoBackend.signDigest(digest, SELF_CHECK_KEY);
  const args = { digest, rs: sig.subarray(0, 64), recovery: (sig[64] ?? 27) - 27 };
  const a = native.recoverPublicKey(args);
  const b = jsCryptoBackend.recoverPublicKey(args);
  return a !== undefined && b !== undefined && Buffer.from(a).equals(Buffer.from(b));
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
  // Longer than one 136-byte block, so the sponge's multi-block absorb is checked too.
  const long = new TextEncoder().encode('patron crypto self-check '.repeat(13));
  const agrees =
    Buffer.from(native.keccak256(message)).equals(Buffer.from(digest)) &&
    Buffer.from(native.keccak256(long)).equals(Buffer.from(jsCryptoBackend.keccak256(long))) &&
    Buffer.from(native.signDigest(digest, SELF_CHECK_KEY)).equals(
      Buffer.from(jsCryptoBackend.signDigest(digest, SELF_CHECK_KEY)),
    ) &&
    recoversAlike(native, digest);
  if (!agrees) return { backend: jsCryptoBackend, reason: 'native addons loaded but failed the self-check' };
  return { backend: native, reason: 'native secp256k1 and keccak addons loaded and passed the self-check' };
}
