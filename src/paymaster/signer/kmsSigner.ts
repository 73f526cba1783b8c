import type { GetPublicKeyCommandOutput } from '@aws-sdk/client-kms';
import type { KmsSignerSetting } from '../../config/signerSettings.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import { addressOfPublicKey, ethereumSignature, publicKeyFromSpki, rsFromDer } from './ecdsaSignature.js';
import { type PaymasterSigner, redacted } from './paymasterSigner.js';

/**
 * The paymaster signer on an AWS KMS key of spec ECC_SECG_P256K1. GetPublicKey (a DER SubjectPublicKeyInfo) gives
 * the address once, at start; each signature is one Sign call with MessageType DIGEST (KMS signs the 32 bytes as
 * given, ECDSA_SHA_256 naming only the digest's size) that returns a DER ECDSA-Sig-Value, made Ethereum's r ‖ s ‖ v
 * by ecdsaSignature.ts. Credentials, and the region when PATRON_SIGNER_KMS_REGION is not set, come from the AWS SDK's
 * default chain (environment, shared config, the instance or task role).
 */
export class KmsSignerError extends Error {
  override readonly name = 'KmsSignerError';
}

const describe = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

export async function openKmsSigner(args: {
  setting: KmsSignerSetting;
  crypto: CryptoBackend;
}): Promise<PaymasterSigner> {
  const { setting, crypto } = args;
  // Loaded only when KMS is configured: the SDK adds ~100 ms to a start that does not use it.
  const { KMSClient, GetPublicKeyCommand, SignCommand } = await import('@aws-sdk/client-kms');
  const client = new KMSClient({
    ...(setting.region === undefined ? {} : { region: setting.region }),
    ...(setting.endpoint === undefined ? {} : { endpoint: setting.endpoint }),
  });
  const KeyId = setting.keyId;
  try {
    let answer: GetPublicKeyCommandOutput;
    try {
      answer = await client.send(new GetPublicKeyCommand({ KeyId }));
    } catch (err) {
      throw new KmsSignerError(
        `AWS KMS GetPublicKey of PATRON_SIGNER_KMS_KEY_ID ${KeyId} failed (${describe(err)}); check the key id, the region and the credentials (kms:GetPublicKey and kms:Sign are needed)`,
      );
    }
    if (answer.KeySpec !== 'ECC_SECG_P256K1' || answer.KeyUsage !== 'SIGN_VERIFY' || answer.PublicKey === undefined) {
      throw new KmsSignerError(
        `the KMS key ${KeyId} is ${answer.KeySpec ?? '?'} for ${answer.KeyUsage ?? '?'}: the paymaster signer needs an ECC_SECG_P256K1 key for SIGN_VERIFY`,
      );
    }
    const publicKey = publicKeyFromSpki(answer.PublicKey);
    const sign = async (digest: Uint8Array): Promise<Uint8Array> => {
      let signed: Uint8Array | undefined;
      try {
        const out = await client.send(
          new SignCommand({ KeyId, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' }),
        );
        signed = out.Signature;
      } catch (err) {
        throw new KmsSignerError(`AWS KMS Sign with ${KeyId} failed (${describe(err)})`);
      }
      if (signed === undefined) throw new KmsSignerError(`AWS KMS Sign with ${KeyId} returned no signature`);
      return ethereumSignature({ digest, ...rsFromDer(signed), publicKey, crypto });
    };
    return redacted({
      address: addressOfPublicKey(publicKey, crypto),
      backend: 'kms',
      sign,
      async close() {
        client.destroy();
      },
    });
  } catch (err) {
    client.destroy();
    throw err;
  }
}
