import {
  bytesToHex,
  type Hex,
  hashMessage,
  hashTypedData,
  hexToBytes,
  keccak256,
  type LocalAccount,
  type Signature,
  serializeSignature,
  serializeTransaction,
} from 'viem';
import { toAccount } from 'viem/accounts';
import type { PaymasterSigner } from './paymasterSigner.js';

/**
 * A viem account whose every signature is a digest signed by a signer back end (a PKCS#11 token, AWS KMS): what the
 * CLI's deploy, deposit and owner commands sign transactions with when the owner's key is on a device
 * (cli/transactionKey.ts). Transactions are hashed as viem's own local accounts hash them.
 */
export function signerAccount(signer: PaymasterSigner): LocalAccount {
  const signHash = async (hash: Hex): Promise<Signature> => {
    const made = signer.sign(hexToBytes(hash));
    const rsv = made instanceof Uint8Array ? made : await made;
    const v = rsv[64] ?? 27;
    return {
      r: bytesToHex(rsv.subarray(0, 32)),
      s: bytesToHex(rsv.subarray(32, 64)),
      v: BigInt(v),
      yParity: v - 27,
    };
  };
  return toAccount({
    address: signer.address,
    async signMessage({ message }) {
      return serializeSignature(await signHash(hashMessage(message)));
    },
    async signTypedData(typedData) {
      return serializeSignature(await signHash(hashTypedData(typedData)));
    },
    async signTransaction(transaction, options) {
      const serializer = options?.serializer ?? serializeTransaction;
      // As viem's signTransaction: a blob transaction is signed without its sidecars.
      const signable = transaction.type === 'eip4844' ? { ...transaction, sidecars: false } : transaction;
      const signature = await signHash(keccak256(await serializer(signable)));
      return serializer(transaction, signature);
    },
  });
}
