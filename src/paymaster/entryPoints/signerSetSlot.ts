import { type Address, bytesToHex, concat, type Hex, hexToBytes, pad, toHex } from 'viem';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';

/**
 * Where PatronPaymaster (v0.6) and PatronPaymasterV07 record that a key is in their signer set. Both declare, after
 * Ownable's owner (slot 0), Ownable2Step's pending owner (1) and feeReceiver (2), `EnumerableSet.AddressSet
 * _signers`: its values array at slot 3 and its positions mapping (value → index + 1, 0 when absent) at slot 4.
 * `_signers.contains(key)`, all that the signature check reads, is `positions[key] != 0`: the slot is
 * keccak256(key as a 32-byte word ‖ 4), Solidity's mapping layout. A test reads it from both deployed contracts.
 */
export const SIGNER_POSITIONS_SLOT = 4n;

export function signerPositionSlot(args: { signer: Address; keccak: CryptoBackend['keccak256'] }): Hex {
  const key = pad(args.signer, { size: 32 });
  const slot = pad(toHex(SIGNER_POSITIONS_SLOT), { size: 32 });
  return bytesToHex(args.keccak(hexToBytes(concat([key, slot]))));
}
