import { generateKeyPairSync } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { Deps } from '../src/deps.js';

/**
 * Scenario u's two halves: the server's dApp that requires backend sponsorship tokens (an RS256 key registered, a
 * per-user USD cap), and the load generator's tokens, one per request (each signing call spends its `jti`), minted
 * before the measurement on worker threads so that minting never shares the CPU with a measured slice.
 */
export const BENCH_TOKEN_KID = 'bench-rs256';
/** The bench server's PATRON_SPONSORSHIP_TOKEN_MAX_LIFETIME_SECONDS: tokens minted at start outlive the whole run. */
export const BENCH_TOKEN_LIFETIME_SECONDS = 3 * 3600;
/** Requests spread over this many end users, each with its own cap row. */
export const BENCH_TOKEN_USERS = 1000;

export interface TokenDapp {
  readonly apiKey: string;
  readonly dappId: string;
  /** PKCS#8 PEM of the issuer's private key: the dApp's backend's, handed to the load generator (bench only). */
  readonly privateKeyPem: string;
}

export async function createTokenDapp(args: { deps: Deps; accountId: string }): Promise<TokenDapp> {
  const { deps, accountId } = args;
  const dapp = await deps.accounts.createDapp({ accountId, name: 'bench tokens', chainIds: [31337] });
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kty: 'RSA', kid: BENCH_TOKEN_KID, alg: 'RS256' };
  const set = await deps.store.dapps.setSponsorshipTokens({
    accountId,
    dappId: dapp.id,
    settings: { required: true, keys: [{ kind: 'jwk', id: BENCH_TOKEN_KID, jwk }] },
    now: Date.now(),
  });
  if (set?.sponsorshipTokens === undefined) throw new Error('the bench dApp does not require tokens');
  // A user cap far above what a run spends: what counting per person costs, not when it binds.
  await deps.policies.create({
    dappId: dapp.id,
    name: 'per person',
    rules: { caps: [{ scope: 'user', unit: 'usd', limit: '100000000', resets: 'daily' }] },
  });
  return {
    apiKey: dapp.apiKey,
    dappId: dapp.id,
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}

// Plain JavaScript run by each worker (eval): node:crypto only, so it needs no TypeScript loader.
const MINTER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPrivateKey, sign, randomUUID } = require('node:crypto');
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
const key = createPrivateKey(workerData.pem);
const header = b64({ alg: 'RS256', kid: workerData.kid, typ: 'JWT' });
const out = [];
for (let i = workerData.from; i < workerData.to; i++) {
  const payload = b64({ aud: workerData.aud, sub: 'user-' + (i % workerData.users), jti: randomUUID(), iat: workerData.now, exp: workerData.exp });
  const input = header + '.' + payload;
  out.push(input + '.' + sign('sha256', Buffer.from(input), key).toString('base64url'));
}
parentPort.postMessage(out);
`;

/** `count` RS256 JWTs for the dApp, each with its own jti, over `workers` threads. */
export async function mintBenchTokens(args: {
  dapp: Pick<TokenDapp, 'dappId' | 'privateKeyPem'>;
  count: number;
  workers?: number;
}): Promise<string[]> {
  const workers = args.workers ?? 2;
  const now = Math.floor(Date.now() / 1000);
  const per = Math.ceil(args.count / workers);
  const parts = await Promise.all(
    Array.from(
      { length: workers },
      (_, w) =>
        new Promise<string[]>((resolve, reject) => {
          const worker = new Worker(MINTER, {
            eval: true,
            workerData: {
              pem: args.dapp.privateKeyPem,
              kid: BENCH_TOKEN_KID,
              aud: args.dapp.dappId,
              users: BENCH_TOKEN_USERS,
              now,
              exp: now + BENCH_TOKEN_LIFETIME_SECONDS - 60,
              from: w * per,
              to: Math.min(args.count, (w + 1) * per),
            },
          });
          worker.once('message', (m: string[]) => resolve(m));
          worker.once('error', reject);
        }),
    ),
  );
  return parts.flat();
}
