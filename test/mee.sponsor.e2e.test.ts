import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MEEVersion } from '@biconomy/abstractjs';
import { SimpleMerkleTree } from '@openzeppelin/merkle-tree';
import {
  type Address,
  defineChain,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  keccak256,
  recoverMessageAddress,
  stringToHex,
} from 'viem';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import type { MeeTank } from '../src/store/tenants/meeTankRepository.js';
import { type MeeNode, startMeeNode } from './helpers/meeNode.js';
import { cloneMeeQuote, encodePaymentCallData, rehashMeeQuote } from './helpers/meeQuote.js';
import { decodeSponsorSignature, type MeeQuote } from './helpers/meeQuoteWire.js';
import { meeGetQuote, referenceSponsorQuote } from './helpers/meeSdk.js';
import { insertTestTank, writeTankKeystore } from './helpers/meeTanks.js';
import { createTokenIssuer, type TokenIssuer } from './helpers/sponsorshipTokens.js';
import { createTenant, createTestContext, type Tenant, type TestContext, testConfig } from './helpers/testContext.js';

/**
 * Patron as abstractjs's self-hosted MEE sponsor, end to end on 127.0.0.1: the real SDK's `getQuote({ sponsorship:
 * true, sponsorshipOptions })` against a stand-in MEE node (test/helpers/meeNode.ts) asks Patron's nonce endpoint,
 * has the node quote, and posts the quote to Patron's sign endpoint; the answer's signature is abstractjs's own
 * sponsor code's for the same quote and key, proven with viem and @openzeppelin/merkle-tree. Then the attacker's
 * quotes, posted straight to the endpoint with a valid token, each refused with its documented code. No Nexus code
 * exists on the dev chain (no npm package ships it), so the payment op is not executed here: the nonce is read from
 * the dev chain's real EntryPoint v0.7, and settlement of a tank's payment is test/settlement.meeTanks.test.ts's.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-mee-'));
const ownerKey = keccak256(stringToHex('patron-test-mee-tank-owner'));
const owner = privateKeyToAddress(ownerKey);
const NODE = getAddress('0x00000000000000000000000000000000000e0de0');
const TANK = getAddress('0x00000000000000000000000000000000000074a1');
const userOwner = privateKeyToAccount(keccak256(stringToHex('patron-test-mee-user')));
const CHAIN = 31337;

let ctx: TestContext;
let base: string;
let tenant: Tenant;
let other: Tenant;
let issuer: TokenIssuer;
let node: MeeNode;
let tank: MeeTank;
let usdc: Address;
const chain = defineChain({
  id: CHAIN,
  name: 'Patron dev chain',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1:1'] } },
});

before(async () => {
  const cfg = testConfig();
  ctx = await createTestContext({
    config: { paymaster: { ...cfg.paymaster, devChain: true }, meeNodes: [NODE] },
  });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  [tenant, other] = await Promise.all([createTenant(ctx.deps), createTenant(ctx.deps)]);
  issuer = await createTokenIssuer();
  for (const t of [tenant, other]) {
    await ctx.deps.accounts.setDappSponsorshipTokens({
      accountId: t.accountId,
      dappId: t.dappId,
      settings: issuer.settings(false),
    });
  }
  await ctx.deps.tokenCatalog.ready();
  const found = ctx.deps.tokenCatalog.snapshot(CHAIN)?.tokens.find((t) => t.symbol === 'USDC');
  assert.ok(found, 'the dev chain prices USDC');
  usdc = found.address;
  const { signer } = writeTankKeystore({ dir, privateKey: ownerKey });
  tank = await insertTestTank(ctx.deps.store, tenant.dappId, {
    chainId: CHAIN,
    address: TANK,
    token: usdc,
    tokenDecimals: 6,
    meeVersion: '2.2.1',
    signer,
    owner,
  });
  node = await startMeeNode({ chains: [chain], nodeAddress: NODE, tokenWeiPerGas: 2n });
  // A tank is signed for only once settlement follows it (its first round sets its cursor).
  const early = await sign(await freshQuote());
  assert.equal(early.status, 400);
  assert.equal(early.body.errors?.[0]?.code, 'tank_not_ready');
  await ctx.deps.settlement.runOnce();
});

after(async () => {
  await node?.close();
  await ctx?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const sponsorUrl = (t: Tenant = tenant) => `${base}/mee/${t.dappId}/v1`;
const bearer = async (t: Tenant = tenant, claims: Record<string, unknown> = {}) => ({
  Authorization: `Bearer ${await issuer.mint({ aud: t.dappId, claims })}`,
});
const transferCall = { to: NODE, value: 0n, data: '0x' as Hex };

/** abstractjs's getQuote through Patron as the sponsor. */
async function sdkQuote(headers: Record<string, string>) {
  return meeGetQuote({
    nodeUrl: node.url,
    sponsorUrl: sponsorUrl(),
    customHeaders: headers,
    gasTank: { chainId: CHAIN, address: TANK, token: usdc },
    calls: [
      {
        to: usdc,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [NODE, 1n] }),
      },
    ],
    owner: userOwner,
    chain,
    rpcUrl: `${base}/chain/${CHAIN}`,
    meeVersion: MEEVersion.V2_2_1,
  });
}

/** A nonce from Patron, and the node's quote over it (the quote as posted to the sign endpoint, unsigned). */
async function freshQuote(): Promise<MeeQuote> {
  const res = await fetch(`${sponsorUrl()}/sponsorship/nonce/${CHAIN}/${TANK}`, { headers: await bearer() });
  assert.equal(res.status, 200, await res.clone().text());
  const { nonce } = (await res.json()) as { nonce: string };
  const { quote } = await meeGetQuoteUnsigned(nonce);
  return quote;
}

/** The node's quote for a payment nonce, as the SDK would post it (the node answers it; nothing is signed). */
async function meeGetQuoteUnsigned(nonce: string): Promise<{ quote: MeeQuote }> {
  const before = node.quotes.length;
  // The node builds its answer from a quote request; the SDK's own request is the simplest honest one.
  await sdkQuoteWithNonceOverride(nonce).catch(() => undefined);
  const quote = node.quotes[before];
  assert.ok(quote, 'the node answered a quote');
  return { quote: cloneMeeQuote(quote) };
}

/** The SDK's flow with a sponsor that only hands out `nonce` and refuses to sign: the node's quote is recorded. */
async function sdkQuoteWithNonceOverride(nonce: string) {
  const http = await import('node:http');
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url?.includes('/sponsorship/nonce/')) {
      res.end(JSON.stringify({ nonceKey: '0', nonce }));
      return;
    }
    res.statusCode = 418;
    res.end(JSON.stringify({ errors: ['not signing'] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await meeGetQuote({
      nodeUrl: node.url,
      sponsorUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      gasTank: { chainId: CHAIN, address: TANK, token: usdc },
      calls: [transferCall],
      owner: userOwner,
      chain,
      rpcUrl: `${base}/chain/${CHAIN}`,
      meeVersion: MEEVersion.V2_2_1,
    });
  } finally {
    server.close();
  }
}

async function sign(quote: MeeQuote, headers?: Record<string, string>, t: Tenant = tenant) {
  const res = await fetch(`${sponsorUrl(t)}/sponsorship/sign/${CHAIN}/${TANK}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(headers ?? (await bearer(t))) },
    body: JSON.stringify(quote),
  });
  return { status: res.status, body: (await res.json()) as { errors?: { code: string; msg: string }[] } & MeeQuote };
}

async function refused(quote: MeeQuote, code: string, status = 400, headers?: Record<string, string>) {
  const r = await sign(quote, headers);
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.errors?.[0]?.code, code, JSON.stringify(r.body));
  return r.body.errors?.[0]?.msg ?? '';
}

describe('Patron as the MEE sponsor of abstractjs getQuote', () => {
  test("the SDK's flow: Patron's nonce, the node's quote, Patron's signature = abstractjs's own sponsor code's", async () => {
    const headers = await bearer();
    const { quote } = await sdkQuote(headers);
    const signature = quote.userOps[0]?.userOp.signature;
    assert.ok(signature?.startsWith('0x177eee00'), String(signature));
    if (signature === undefined) return;
    // The node got Patron's nonce: lane ‖ 0x00 ‖ the 2.2.1 K1 MEE validator, sequence 0 from the real EntryPoint.
    const nonce = BigInt(quote.paymentInfo.nonce);
    assert.equal(nonce & (2n ** 64n - 1n), 0n);
    assert.equal(
      ((nonce >> 64n) & (2n ** 160n - 1n)).toString(16).padStart(40, '0'),
      '0000000002d3cc5642a748b6783f32c032616e03',
    );
    const unsigned = cloneMeeQuote(quote);
    const payment = unsigned.userOps[0];
    assert.ok(payment);
    payment.userOp.signature = '0x';
    const reference = await referenceSponsorQuote({
      quote: unsigned,
      ownerPrivateKey: ownerKey,
      meeVersion: MEEVersion.V2_2_1,
    });
    assert.equal(signature, reference.userOps[0]?.userOp.signature);
    const decoded = decodeSponsorSignature(signature);
    assert.equal(decoded.root, quote.hash);
    assert.equal(SimpleMerkleTree.verify(decoded.root, payment.meeUserOpHash, [...decoded.proof]), true);
    assert.equal(await recoverMessageAddress({ message: { raw: decoded.root }, signature: decoded.signature }), owner);
    // Reserved in the dApp's ledger before the answer, as kind 'mee', the tank as its paymaster.
    const rows = await ctx.deps.store.ledger.list({ filter: { dappId: tenant.dappId }, limit: 10 });
    const row = rows.find((r) => r.userOpHash === payment.userOpHash.toLowerCase());
    assert.ok(row, `no ledger row for the payment op among ${JSON.stringify(rows.map((r) => r.userOpHash))}`);
    assert.equal(row.paymaster, TANK.toLowerCase());
    assert.equal(row.status, 'reserved');
  });

  test('every dishonest quote is refused with its code', async () => {
    const honest = await freshQuote();
    const p = (q: MeeQuote) => {
      const op = q.userOps[0];
      assert.ok(op);
      return op;
    };
    const mutate = (f: (q: MeeQuote) => void, keepHashes = false) => {
      const q = cloneMeeQuote(honest);
      f(q);
      return keepHashes ? q : rehashMeeQuote(q);
    };
    // Swapped callData under the original hashes.
    await refused(
      mutate((q) => {
        p(q).userOp.callData = encodePaymentCallData({ token: usdc, node: userOwner.address, amount: 1n });
      }, true),
      'hash_mismatch',
    );
    // A forged root.
    await refused(
      mutate((q) => {
        q.hash = keccak256(q.hash);
      }, true),
      'root_mismatch',
    );
    // A second tank op (self-consistent).
    await refused(
      mutate((q) => {
        const op = q.userOps[1];
        assert.ok(op);
        op.userOp.sender = TANK;
      }),
      'tank_op',
    );
    // Another chain.
    await refused(
      mutate((q) => {
        p(q).chainId = '8453';
      }),
      'payment_op',
    );
    // A window too long.
    await refused(
      mutate((q) => {
        p(q).upperBoundTimestamp = String(Number(p(q).lowerBoundTimestamp) + 3600);
      }),
      'window',
    );
    // A payment to someone else.
    await refused(
      mutate((q) => {
        p(q).userOp.callData = encodePaymentCallData({
          token: usdc,
          node: userOwner.address,
          amount: BigInt(q.paymentInfo.tokenWeiAmount),
        });
      }),
      'payment_call',
    );
    // The honest quote signs once; the same nonce lane again is refused.
    const first = await sign(honest);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    await refused(honest, 'nonce_used');
  });

  test("an amount over the dApp's per-op cap is refused (403) and nothing is reserved", async () => {
    const policy = await ctx.deps.policies.create({
      dappId: tenant.dappId,
      name: 'mee per op',
      rules: { caps: [{ scope: 'op', unit: 'usd', limit: '0.000001' }] },
    });
    try {
      const q = await freshQuote();
      const msg = await refused(q, 'cap', 403);
      assert.match(msg, /mee per op/);
    } finally {
      await ctx.deps.policies.delete({ dappId: tenant.dappId, policyId: policy.id });
    }
  });

  test('no token, a replayed token, another dApp’s tank, an untrusted node: refused', async () => {
    const q = await freshQuote();
    await refused(q, 'token_required', 401, {});
    const headers = await bearer();
    // The other dApp's URL does not find this tank (its existence is not the other dApp's to learn).
    const res = await sign(q, await bearer(other), other);
    assert.equal(res.status, 404, JSON.stringify(res.body));
    const ok = await sign(q, headers);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    await refused(await freshQuote(), 'replayed', 401, headers);
    const untrusted = rehashMeeQuote(
      (() => {
        const x = cloneMeeQuote(q);
        x.node = userOwner.address;
        const op = x.userOps[0];
        assert.ok(op);
        op.userOp.callData = encodePaymentCallData({
          token: usdc,
          node: userOwner.address,
          amount: BigInt(x.paymentInfo.tokenWeiAmount),
        });
        return x;
      })(),
    );
    await refused(untrusted, 'node_not_trusted');
  });

  test('CORS: the preflight names the requested headers for an allowed origin; info lists the tank', async () => {
    const pre = await fetch(`${sponsorUrl()}/sponsorship/sign/${CHAIN}/${TANK}`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://dapp.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-app',
      },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), 'https://dapp.example');
    assert.equal(pre.headers.get('access-control-allow-headers'), 'authorization,content-type,x-app');
    const info = await fetch(`${sponsorUrl()}/sponsorship/info`);
    assert.equal(info.status, 200);
    const body = (await info.json()) as Record<string, { gasTankAddress: string; token: { address: string } }[]>;
    assert.equal(body[String(CHAIN)]?.[0]?.gasTankAddress, TANK);
    assert.equal(body[String(CHAIN)]?.[0]?.token.address, usdc);
    assert.equal(tank.dappId, tenant.dappId);
  });
});
