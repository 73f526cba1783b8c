import { type Address, getAddress } from 'viem';
import { type CryptoBackend, loadNativeCryptoBackend } from './cryptoBackend.js';

/**
 * EIP-55 checksum of a lower-case 0x address: exactly what viem's getAddress returns. Every request's sender
 * goes through here, and viem hashes with JavaScript keccak: ~35 µs for an address it has not seen (it keeps
 * 8,192), which is most of them when many users are sponsored. The native keccak costs ~3 µs; it is used when it
 * loads and agrees with viem on a known address (a broken build must not miscase addresses), else viem is.
 */
function eip55(lower: string, keccak: CryptoBackend['keccak256']): Address {
  const ascii = Buffer.from(lower, 'latin1');
  const hash = keccak(ascii.subarray(2));
  for (let i = 0; i < 40; i++) {
    const nibble = ((hash[i >> 1] ?? 0) >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    // a-f (0x61-0x66) are upper-cased where the hash nibble is 8 or more; digits stay as they are.
    if (nibble >= 8 && (ascii[i + 2] ?? 0) >= 0x61) ascii[i + 2] = (ascii[i + 2] ?? 0) - 0x20;
  }
  return ascii.toString('latin1') as Address;
}

const CHECKSUM_PROBE = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359';
const nativeKeccak = loadNativeCryptoBackend()?.keccak256;
const nativeChecksums =
  nativeKeccak !== undefined && eip55(CHECKSUM_PROBE, nativeKeccak) === getAddress(CHECKSUM_PROBE);
/** Which keccak checksums addresses here (reported for tests). */
export const ADDRESS_CHECKSUM_KECCAK: 'native' | 'viem' = nativeChecksums ? 'native' : 'viem';
const checksum: (lower: string) => Address =
  nativeKeccak !== undefined && nativeChecksums ? (lower) => eip55(lower, nativeKeccak) : (lower) => getAddress(lower);

/** Checksummed addresses of recent senders: users send several operations. Cleared when full. */
const checksummed = new Map<string, Address>();
const MAX_CHECKSUMMED = 8192;

/**
 * The address in EIP-55 form (what viem's `getAddress` returns for it), from any letter case of a 0x address of
 * 40 hex digits (the caller checks the form). The wire parsers (rpc/wire/) and the policies use it.
 */
export function toAddress(v: string): Address {
  const lower = v.toLowerCase();
  let out = checksummed.get(lower);
  if (out === undefined) {
    out = checksum(lower);
    if (checksummed.size >= MAX_CHECKSUMMED) checksummed.clear();
    checksummed.set(lower, out);
  }
  return out;
}
