import { type Address, bytesToHex, concat, encodeAbiParameters, getAddress, type Hex, hexToBytes, toBytes } from 'viem';
import type { CryptoBackend } from '../crypto/cryptoBackend.js';

/*
 * The voucher's EIP-712 digest and signer with the service's crypto backend (native keccak and secp256k1): viem's
 * recoverTypedDataAddress, all JavaScript, took ~2.7 ms CPU per voucher. The struct is fixed, so its encoding is
 * written out (https://eips.ethereum.org/EIPS/eip-712#definition-of-encodedata); the test holds it to viem's
 * hashTypedData.
 */

/** The voucher's EIP-712 message as Patron reads it (sponsorshipVoucher.ts parses and checks it). */
export interface SponsorshipVoucher {
  readonly dapp: string;
  readonly sub: string;
  /** 0: no lower bound. */
  readonly nbf: bigint;
  readonly exp: bigint;
  readonly jti: Hex;
  /** The zero address: any sender. */
  readonly sender: Address;
  /**
   * The person's own address (a JWT's `addr`): what a policy's gating rule with `subject: 'user'` reads, whichever
   * wallet sends the op. The zero address: none given.
   */
  readonly addr: Address;
  /** 0: no bound. */
  readonly maxCostWei: bigint;
  /** Empty: any contract. */
  readonly contracts: readonly Address[];
}

const TYPE =
  'SponsorshipVoucher(string dapp,string sub,uint64 nbf,uint64 exp,bytes32 jti,address sender,address addr,uint256 maxCostWei,address[] contracts)';
const DOMAIN_TYPE = 'EIP712Domain(string name,string version,uint256 chainId)';

export function voucherDigest(args: {
  voucher: SponsorshipVoucher;
  chainId: number;
  crypto: CryptoBackend;
}): Uint8Array {
  const k = (data: Uint8Array) => args.crypto.keccak256(data);
  const kText = (text: string) => bytesToHex(k(toBytes(text)));
  const v = args.voucher;
  const domainSeparator = k(
    hexToBytes(
      encodeAbiParameters(
        [{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }],
        [kText(DOMAIN_TYPE), kText('Patron Sponsorship'), kText('1'), BigInt(args.chainId)],
      ),
    ),
  );
  const contracts = bytesToHex(
    k(hexToBytes(concat(v.contracts.map((c) => encodeAbiParameters([{ type: 'address' }], [c]))))),
  );
  const structHash = k(
    hexToBytes(
      encodeAbiParameters(
        [
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'uint64' },
          { type: 'uint64' },
          { type: 'bytes32' },
          { type: 'address' },
          { type: 'address' },
          { type: 'uint256' },
          { type: 'bytes32' },
        ],
        [kText(TYPE), kText(v.dapp), kText(v.sub), v.nbf, v.exp, v.jti, v.sender, v.addr, v.maxCostWei, contracts],
      ),
    ),
  );
  return k(new Uint8Array([0x19, 0x01, ...domainSeparator, ...structHash]));
}

/** The address that signed `digest` (r ‖ s ‖ v, v 27/28 or 0/1), or undefined. */
export function recoverSigner(args: { digest: Uint8Array; signature: Uint8Array; crypto: CryptoBackend }) {
  const { signature } = args;
  const v = signature[64] ?? 0;
  const recovery = v >= 27 ? v - 27 : v;
  if (signature.length !== 65 || (recovery !== 0 && recovery !== 1)) return undefined;
  const publicKey = args.crypto.recoverPublicKey({ digest: args.digest, rs: signature.subarray(0, 64), recovery });
  if (publicKey === undefined) return undefined;
  const hash = args.crypto.keccak256(publicKey.subarray(1));
  return getAddress(bytesToHex(hash.subarray(12))) as Address;
}
