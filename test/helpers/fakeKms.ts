import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { secp256k1 } from '@noble/curves/secp256k1.js';

/**
 * AWS KMS's GetPublicKey and Sign for secp256k1 keys the test holds, over KMS's own wire protocol (JSON 1.1: POST /,
 * `X-Amz-Target: TrentService.<Operation>`, base64 blobs), on 127.0.0.1, so the real @aws-sdk/client-kms talks to
 * it. No emulator installable here signs secp256k1; this stands in for the service, not for the SDK. Its signatures
 * keep s as the curve gives it (high about half the time), as KMS does. Request signatures (SigV4) are not checked.
 */
export interface FakeKms {
  readonly endpoint: string;
  /** A new ECC_SECG_P256K1 key: its id and private key. */
  createKey(): { keyId: string; privateKey: Uint8Array };
  /** A key of another spec, which the signer must refuse. */
  createP256Key(): string;
  readonly signCalls: () => number;
  /** Signatures answered with s in the upper half (which the signer must turn low). */
  readonly highS: () => number;
  close(): Promise<void>;
}

/** DER SubjectPublicKeyInfo header for an id-ecPublicKey on secp256k1 with a 65-byte point. */
const SPKI_PREFIX = Buffer.from('3056301006072a8648ce3d020106052b8104000a034200', 'hex');
/** The same for prime256v1 (P-256), whose point is any 65 bytes here: the signer refuses the curve first. */
const P256_SPKI_PREFIX = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');

export async function startFakeKms(): Promise<FakeKms> {
  const keys = new Map<string, { privateKey: Uint8Array } | { p256: true }>();
  let signCalls = 0;
  let highS = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, string>;
      const reply = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(value));
      };
      const key = keys.get(body.KeyId ?? '');
      if (key === undefined) {
        return reply(400, { __type: 'NotFoundException', message: `Key '${body.KeyId}' does not exist` });
      }
      if (target === 'TrentService.GetPublicKey') {
        const spki =
          'p256' in key
            ? Buffer.concat([P256_SPKI_PREFIX, Buffer.alloc(65, 4)])
            : Buffer.concat([SPKI_PREFIX, secp256k1.getPublicKey(key.privateKey, false)]);
        return reply(200, {
          KeyId: body.KeyId,
          PublicKey: spki.toString('base64'),
          KeySpec: 'p256' in key ? 'ECC_NIST_P256' : 'ECC_SECG_P256K1',
          KeyUsage: 'SIGN_VERIFY',
          SigningAlgorithms: ['ECDSA_SHA_256'],
        });
      }
      if (target === 'TrentService.Sign' && !('p256' in key)) {
        signCalls++;
        const message = Buffer.from(body.Message ?? '', 'base64');
        if (body.MessageType !== 'DIGEST' || body.SigningAlgorithm !== 'ECDSA_SHA_256' || message.length !== 32) {
          return reply(400, { __type: 'ValidationException', message: 'expected a 32-byte DIGEST, ECDSA_SHA_256' });
        }
        const der = secp256k1.sign(message, key.privateKey, { prehash: false, lowS: false, format: 'der' });
        if (secp256k1.Signature.fromBytes(der, 'der').hasHighS()) highS++;
        return reply(200, {
          KeyId: body.KeyId,
          Signature: Buffer.from(der).toString('base64'),
          SigningAlgorithm: 'ECDSA_SHA_256',
        });
      }
      return reply(400, { __type: 'UnsupportedOperationException', message: `${target} is not served here` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    createKey() {
      const keyId = randomUUID();
      const privateKey = secp256k1.utils.randomSecretKey();
      keys.set(keyId, { privateKey });
      return { keyId, privateKey };
    },
    createP256Key() {
      const keyId = randomUUID();
      keys.set(keyId, { p256: true });
      return keyId;
    },
    signCalls: () => signCalls,
    highS: () => highS,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
