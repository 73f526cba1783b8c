import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { selectCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { NO_CALLER_RESTRICTIONS } from '../src/dappSettings/callerRestrictions.js';
import type { PublicJwk, RegisteredTokenKey } from '../src/dappSettings/registeredTokenKeys.js';
import { createJwksCache } from '../src/sponsorshipTokens/jwksCache.js';
import { createSponsorshipTokenVerifier } from '../src/sponsorshipTokens/sponsorshipTokenVerifier.js';
import type { LedgerCharge, ReserveArgs } from '../src/store/ledger/ledgerTypes.js';
import { openStore } from '../src/store/store.js';

/**
 * The floor under scenario u (bench/sponsor.ts): what the parts issue 23 requires of a request with a backend token
 * and a user cap cost by themselves, in process, through Patron's own code on an SQLite file as the service uses it,
 * with no HTTP, no policy evaluation and no signing. Their sum is the least u can cost over a, whatever else is made
 * cheaper; read it against scenario a's CPU per request from bench:sponsor.
 *   verify   one fresh RS256 JWT per call through the verifier (signature, header, claims), none cached;
 *   spend    its jti spent on its own (the replay store's upsert, token mode's way), in groups of BATCH as a busy
 *            loop turn groups them;
 *   reserve  the ledger row every signed op writes, in groups of BATCH in one transaction, the service's SQLite
 *            path: with no charge (a), with one per-user charge, and with that charge and the token's jti spent in
 *            the same transaction (u, as the sponsored path serves it).
 * Rounds interleave the parts; each prints its median µs of process CPU per call.
 *
 * Usage: `npm run bench:token-floor [-- calls]` (default 20,000 per part per round, 3 rounds).
 */
const CALLS = Number(process.argv[2] ?? 20_000);
const ROUNDS = 3;
const BATCH = 28;
const USERS = 1000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-token-floor-'));
const store = await openStore({ storage: { kind: 'sqlite', file: path.join(dir, 'patron.sqlite') } });
const accountId = randomUUID();
await store.accounts.create({ id: accountId, email: `${accountId}@example.com`, createdAt: Date.now() });
const dappId = randomUUID();
await store.dapps.insert({
  id: dappId,
  accountId,
  name: 'floor',
  chainIds: [31337],
  apiKeyHash: randomUUID(),
  apiKeyPrefix: 'pk.floor',
  apiKeyCiphertext: 'x',
  limits: {},
  restrictions: NO_CALLER_RESTRICTIONS,
  createdAt: Date.now(),
  updatedAt: Date.now(),
});

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...publicKey.export({ format: 'jwk' }), kty: 'RSA', kid: 'floor', alg: 'RS256' } as PublicJwk;
const keys: RegisteredTokenKey[] = [{ kind: 'jwk', id: 'floor', jwk }];
const nowSeconds = Math.floor(Date.now() / 1000);
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const header = b64({ alg: 'RS256', kid: 'floor', typ: 'JWT' });
const mint = (i: number) => {
  const payload = b64({
    aud: dappId,
    sub: `user-${i % USERS}`,
    jti: randomUUID(),
    iat: nowSeconds,
    exp: nowSeconds + 500,
  });
  const input = `${header}.${payload}`;
  return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
};
process.stdout.write(`# minting ${CALLS * ROUNDS} RS256 tokens… `);
const tokens = Array.from({ length: CALLS * ROUNDS }, (_, i) => mint(i));
process.stdout.write('done\n');

const verifier = createSponsorshipTokenVerifier({
  jwks: createJwksCache({ fetchJwks: async () => ({ keys: [] }) }),
  replay: store.sponsorshipTokenUses,
  crypto: selectCryptoBackend().backend,
  maxLifetimeSeconds: 600,
});

const cpu = async (run: () => Promise<void>): Promise<number> => {
  const start = process.cpuUsage();
  await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
};

/** `one(i)` for CALLS values of i, BATCH at a time (one loop turn each, as the service's grouping sees them). */
const grouped = async (one: (i: number) => Promise<unknown>) => {
  for (let i = 0; i < CALLS; i += BATCH) {
    await Promise.all(Array.from({ length: Math.min(BATCH, CALLS - i) }, (_, k) => one(i + k)));
  }
};

let opSeq = 0;
const reservation = (charges: readonly LedgerCharge[], user: string | undefined, jti?: string): ReserveArgs => {
  const n = opSeq++;
  const hash = `0x${n.toString(16).padStart(64, '0')}`;
  return {
    id: `31337:${hash}`,
    dappId,
    chainId: 31337,
    userOpHash: hash,
    charges,
    expiresAt: Date.now() + 600_000,
    now: Date.now(),
    window: { unit: 'seconds', until: nowSeconds + 600 },
    paymaster: `0x${'ab'.repeat(20)}`,
    kind: 'sponsored',
    item: {
      sender: `0x${(n % 5000).toString(16).padStart(40, '0')}`,
      user,
      policyIds: ['p1'],
      worstCaseWei: 10n ** 15n,
    },
    ...(jti === undefined ? {} : { tokenUse: { jti, expiresAt: nowSeconds + 600, nowSeconds } }),
  };
};
const userCharge = (i: number): LedgerCharge => ({
  key: `p1:user:day:~user-${i % USERS}`,
  unit: 'usd',
  amount: 3_000_000n,
  limit: 10n ** 20n,
  windowEnd: Date.now() + 86_400_000,
});

const parts: Record<string, (round: number) => Promise<number>> = {
  verify: (round) =>
    cpu(async () => {
      for (let i = 0; i < CALLS; i++) {
        const verdict = await verifier.verify({ token: tokens[round * CALLS + i] ?? '', dappId, chainId: 31337, keys });
        if (!verdict.ok) throw new Error(`token refused: ${verdict.refusal.message}`);
      }
    }),
  spend: () =>
    cpu(() =>
      grouped(async () => {
        const spent = await store.sponsorshipTokenUses.spend({
          dappId,
          jti: randomUUID(),
          expiresAt: nowSeconds + 600,
          nowSeconds,
        });
        if (!spent) throw new Error('a fresh jti was refused');
      }),
    ),
  'reserve, no charge (a)': () =>
    cpu(() =>
      grouped(async () => {
        const r = await store.spendLedger.reserve(reservation([], undefined));
        if (!r.ok) throw new Error('refused');
      }),
    ),
  'reserve, user charge': () =>
    cpu(() =>
      grouped(async (i) => {
        const r = await store.spendLedger.reserve(reservation([userCharge(i)], `user-${i % USERS}`));
        if (!r.ok) throw new Error('refused');
      }),
    ),
  'reserve, charge + jti (u)': () =>
    cpu(() =>
      grouped(async (i) => {
        const r = await store.spendLedger.reserve(reservation([userCharge(i)], `user-${i % USERS}`, randomUUID()));
        if (!r.ok) throw new Error('refused');
      }),
    ),
};

const samples = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(parts)) {
    const us = await run(round);
    samples.set(name, [...(samples.get(name) ?? []), us]);
  }
}
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const m = Object.fromEntries([...samples].map(([k, v]) => [k, median(v)]));
console.log(`# ${CALLS} calls per part per round, ${ROUNDS} rounds, groups of ${BATCH}; µs of process CPU per call`);
for (const [name, v] of samples) {
  console.log(
    `${name.padEnd(26)} ${median(v).toFixed(1).padStart(6)}  (rounds: ${v.map((x) => x.toFixed(1)).join(', ')})`,
  );
}
const floor = (m.verify ?? 0) + (m['reserve, charge + jti (u)'] ?? 0) - (m['reserve, no charge (a)'] ?? 0);
console.log(
  `floor of u over a (the check, and u's reservation with charge and jti over a's): ${floor.toFixed(1)} µs/req`,
);
console.log('(the policy evaluation of the user cap and the request bytes of the token come on top)');
await store.close();
fs.rmSync(dir, { recursive: true, force: true });
