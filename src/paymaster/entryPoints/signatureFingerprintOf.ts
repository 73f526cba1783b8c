import type { Hex } from 'viem';
import type { EntryPointVersion } from '../../chain/chainRegistry.js';
import { signatureFingerprint } from '../requestFacts.js';
import { decodePaymasterAndData } from './v06/patronPaymasterV06.js';
import { decodePaymasterAndDataV07 } from './v07/patronPaymasterV07.js';

/**
 * The fingerprint (requestFacts.ts) of the paymaster signature in an included op's `paymasterAndData`, as the
 * version's codec reads it; undefined for bytes Patron's paymaster would not accept. Settlement's attribution
 * between dApps that signed one op key (src/settlement/README.md).
 */
export function signatureFingerprintOf(version: EntryPointVersion, paymasterAndData: Hex): string | undefined {
  try {
    const decoded =
      version === '0.6' ? decodePaymasterAndData(paymasterAndData) : decodePaymasterAndDataV07(paymasterAndData);
    return decoded.signature.length === 65 ? signatureFingerprint(decoded.signature) : undefined;
  } catch {
    return undefined;
  }
}
