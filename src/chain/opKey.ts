import { type Address, encodeAbiParameters, type Hex, keccak256 } from 'viem';

/**
 * The key of an op by what an EntryPoint includes once: (chain, EntryPoint, sender, nonce). The spend ledger keys a
 * dApp's reservation by it (every signature of one key holds one worst case: at most one of them can be included),
 * the solvency guard and the request log key a signature made before the op's gas was final by it (the bundler
 * sets the final limits, and the userOpHash with them, after Patron signed caps), and settlement computes it from
 * every UserOperationEvent (sender and nonce are in the event) to find them.
 */
export function opKey(args: {
  readonly chainId: number;
  readonly entryPoint: Address;
  readonly sender: Address;
  readonly nonce: bigint;
}): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'string' }, { type: 'uint256' }, { type: 'address' }, { type: 'address' }, { type: 'uint256' }],
      [OP_KEY_TAG, BigInt(args.chainId), args.entryPoint, args.sender, args.nonce],
    ),
  );
}

const OP_KEY_TAG = 'patron.opKey';

/**
 * opKey's preimage written by hand (the same 224 bytes encodeAbiParameters makes: the string's offset, the four
 * words, the string's length and its padded bytes) and hashed with the caller's keccak: on the signing path the
 * native one, ~3 µs where viem's JS keccak and encoder cost tens (src/crypto/cryptoBackend.ts). Lower-case hex.
 */
export function opKeyWith(
  keccak256Bytes: (data: Uint8Array) => Uint8Array,
  args: { readonly chainId: number; readonly entryPoint: Address; readonly sender: Address; readonly nonce: bigint },
): Hex {
  const buf = Buffer.alloc(224);
  buf.writeUInt8(0xa0, 31);
  buf.writeBigUInt64BE(BigInt(args.chainId), 56);
  writeAddress(buf, 64, args.entryPoint);
  writeAddress(buf, 96, args.sender);
  let nonce = args.nonce;
  if (nonce < 0n || nonce >= 1n << 256n) throw new RangeError('nonce is out of the uint256 range');
  for (let limb = 3; limb >= 0; limb--) {
    buf.writeBigUInt64BE(BigInt.asUintN(64, nonce), 128 + limb * 8);
    nonce >>= 64n;
  }
  buf.writeUInt8(OP_KEY_TAG.length, 191);
  buf.write(OP_KEY_TAG, 192, 'latin1');
  return `0x${Buffer.from(keccak256Bytes(buf)).toString('hex')}`;
}

function writeAddress(buf: Buffer, offset: number, address: string): void {
  if (address.length !== 42 || buf.write(address.slice(2), offset + 12, 20, 'hex') !== 20) {
    throw new RangeError(`${address} is not an address`);
  }
}
