import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Address, getAddress, type Hex, keccak256, stringToHex } from 'viem';
import { entryPoint07Address } from 'viem/account-abstraction';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import { checkMeeQuote } from '../src/mee/checkMeeQuote.js';
import { newTankId } from '../src/mee/createGasTank.js';
import { meeQuoteSchema } from '../src/mee/meeQuote.js';
import { meeSponsorSignature } from '../src/mee/sponsorSignature.js';
import { buildMeeQuote, encodeNexusExecuteSingle } from '../test/helpers/meeQuote.js';
import type { MeeQuote } from '../test/helpers/meeQuoteWire.js';
import { writeTankKeystore } from '../test/helpers/meeTanks.js';
import { createTokenIssuer } from '../test/helpers/sponsorshipTokens.js';
import { BENCH_RATE_LIMITS } from './benchRateLimits.js';

/**
 * The MEE sponsor's sign endpoint: µs of CPU per `POST /mee/{dappId}/v1/sponsorship/sign/{chainId}/{tank}` (the whole
 * service in this process, answered through Fastify's inject: the token verified and spent, the quote parsed and
 * every hash recomputed, the dApp's policy checked, the lane claimed, the root signed by the tank's keystore key, the
 * payment reserved in SQLite, the call reported), against the reference in the same run: only the quote's hashes,
 * checks and signature (meeQuoteSchema + checkMeeQuote + viem's signMessage of the root + the signature's encoding).
 * Interleaved rounds; each request a quote of its own (a fresh nonce lane, a fresh token), prepared outside the
 * measured loop. Usage: `npm run bench:mee-sign [-- requests per round]` (default 200), BENCH_ROUNDS (default 4).
 */
const perRound = Number(process.argv[2] ?? 200);
const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const CHAIN = 31337;
const NODE = getAddress('0x00000000000000000000000000000000000e0de0');
const TANK = getAddress('0x00000000000000000000000000000000000074a1');
const USER = getAddress('0x00000000000000000000000000000000000a11ce');
const ownerKey = keccak256(stringToHex('patron-bench-mee-tank-owner'));
const owner = privateKeyToAccount(ownerKey);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-bench-mee-'));
const config = loadConfig({
  PATRON_DATA_DIR: dir,
  LOG_LEVEL: 'warn',
  PATRON_RATE_LIMITS: BENCH_RATE_LIMITS,
  PATRON_MEE_NODES: NODE,
});
const deps = await createDeps(config, createLogger({ level: 'warn' }));
const app = createApp(deps);
await app.ready();

const account = await deps.accounts.createAccount({ email: 'bench-mee@example.com' });
const dapp = await deps.accounts.createDapp({ accountId: account.id, name: 'mee bench', chainIds: [CHAIN] });
const issuer = await createTokenIssuer();
await deps.accounts.setDappSponsorshipTokens({ accountId: account.id, dappId: dapp.id, settings: issuer.settings() });
await deps.tokenCatalog.ready();
const usdc = deps.tokenCatalog.snapshot(CHAIN)?.tokens.find((t) => t.symbol === 'USDC')?.address;
if (usdc === undefined) throw new Error('the dev chain has no priced USDC');
const { signer } = writeTankKeystore({ dir, privateKey: ownerKey });
const tank = await deps.store.meeTanks.create({
  id: newTankId(),
  dappId: dapp.id,
  chainId: CHAIN,
  address: TANK,
  token: usdc,
  tokenDecimals: 6,
  meeVersion: '2.2.1',
  signer,
  owner: privateKeyToAddress(ownerKey),
  lowBalance: undefined,
  createdAt: Date.now(),
});
const base = `/mee/${dapp.id}/v1/sponsorship`;
// The tank is signed for once settlement follows it (its first round sets its cursor).
await deps.settlement.runOnce();

/** One quote over a fresh lane of Patron's, and a token for it. */
async function prepared(i: number): Promise<{ quote: MeeQuote; token: string }> {
  const token = await issuer.mint({ aud: dapp.id });
  const res = await app.inject({
    method: 'GET',
    url: `${base}/nonce/${CHAIN}/${TANK}`,
    headers: { authorization: `Bearer ${await issuer.mint({ aud: dapp.id })}` },
  });
  const { nonce } = res.json() as { nonce: string };
  const now = Math.floor(Date.now() / 1000);
  const quote = buildMeeQuote({
    node: NODE,
    nodePaymaster: '0x000000000000000000000000000000000000bb0c',
    payment: { chainId: CHAIN, tank: TANK, token: usdc as Address, nonce: BigInt(nonce), tokenWeiAmount: 12_345n },
    userOps: [
      {
        chainId: CHAIN,
        sender: USER,
        nonce: BigInt(i),
        callData: encodeNexusExecuteSingle({ to: usdc as Address, value: 0n, data: '0x' }),
      },
    ],
    lowerBound: now,
    upperBound: now + 180,
  });
  return { quote, token };
}

async function endpoint(batch: readonly { quote: MeeQuote; token: string }[]): Promise<number> {
  const start = process.cpuUsage();
  for (const { quote, token } of batch) {
    const res = await app.inject({
      method: 'POST',
      url: `${base}/sign/${CHAIN}/${TANK}`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      payload: JSON.stringify(quote),
    });
    if (res.statusCode !== 200) throw new Error(`sign answered ${res.statusCode}: ${res.body}`);
  }
  const cpu = process.cpuUsage(start);
  return (cpu.user + cpu.system) / batch.length;
}

async function reference(batch: readonly { quote: MeeQuote }[]): Promise<number> {
  const tanks = new Set([TANK.toLowerCase()]);
  const nodes = new Set([NODE.toLowerCase()]);
  const start = process.cpuUsage();
  for (const { quote } of batch) {
    const parsed = meeQuoteSchema.parse(JSON.parse(JSON.stringify(quote)));
    const c = checkMeeQuote({
      quote: parsed,
      tank: { chainId: CHAIN, address: TANK, token: usdc as Address, meeVersion: '2.2.1' },
      tankAddresses: tanks,
      trustedNodes: nodes,
      entryPoint: entryPoint07Address,
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    const ownerSignature: Hex = await owner.signMessage({ message: { raw: c.root } });
    meeSponsorSignature({ root: c.root, lower: 0, upper: 1, proof: c.proof, ownerSignature });
  }
  const cpu = process.cpuUsage(start);
  return (cpu.user + cpu.system) / batch.length;
}

// Warm both (the keystore is opened on the first signature).
{
  const warm = await Promise.all(Array.from({ length: 20 }, (_, i) => prepared(1_000_000 + i)));
  await endpoint(warm);
  await reference(warm);
}
console.log(
  `# MEE sign endpoint, µs of CPU per request (${perRound} per round, ${rounds} rounds), node ${process.version}`,
);
console.log(`${'round'.padEnd(6)} ${'endpoint'.padStart(9)} ${'reference'.padStart(10)} ${'ratio'.padStart(6)}`);
for (let r = 0; r < rounds; r++) {
  const batch = [];
  for (let i = 0; i < perRound; i++) batch.push(await prepared(r * perRound + i));
  // Alternate the order in each round: the one measured second meets a warmer (or busier) machine.
  let ep: number;
  let ref: number;
  if (r % 2 === 0) {
    ep = await endpoint(batch);
    ref = await reference(batch);
  } else {
    ref = await reference(batch);
    ep = await endpoint(batch);
  }
  console.log(
    `${String(r + 1).padEnd(6)} ${ep.toFixed(0).padStart(9)} ${ref.toFixed(0).padStart(10)} ${(ep / ref).toFixed(2).padStart(6)}`,
  );
}
console.log(`tank ${tank.id}`);
await app.close();
await deps.close();
fs.rmSync(dir, { recursive: true, force: true });
