import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SimpleMerkleTree } from '@openzeppelin/merkle-tree';
import {
  type Address,
  defineChain,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  recoverMessageAddress,
  size,
  slice,
} from 'viem';
import { entryPoint07Address } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { base } from 'viem/chains';
import { startDevChain } from '../src/chain/embeddedChain.js';
import { serveChainOverHttp } from './helpers/chainHttpServer.js';
import { type MeeNode, startMeeNode } from './helpers/meeNode.js';
import { cloneMeeQuote, encodePaymentCallData, rehashMeeQuote } from './helpers/meeQuote.js';
import { decodeSponsorSignature, type MeeQuote, quoteLeaves, quoteRoot } from './helpers/meeQuoteWire.js';
import { DEFAULT_USER_NEXUS, meeGetQuote, referenceSponsorQuote } from './helpers/meeSdk.js';
import { testKey } from './helpers/patronPaymasterV06.js';

/**
 * The harness itself, proven with abstractjs 1.2.3 end to end: the SDK's getQuote with sponsorshipOptions pointed at
 * a tiny sponsor whose sign handler is abstractjs's own sponsor code (referenceSponsorQuote). What this pins down is
 * what Patron's MEE endpoints must do on the wire, and the answer they must give (the same bytes).
 */
const TANK_OWNER_KEY: Hex = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a';
const tankOwner = privateKeyToAccount(TANK_OWNER_KEY);
const user = privateKeyToAccount('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6');
const NODE: Address = '0x4b19129ea58431a06d01054f69ab4c5ee0b1d2ac';
const TANK: Address = getAddress('0x7a11c0000000000000000000000000000000beef');
const USDC: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const HEADERS = { 'x-patron-key': 'pk_test_123' };
const NONCE_KEY = (0x0a0b0cn << 168n) | 0x00000000d12897ddadc2044614a9677b191a2d95n;
const SPONSOR_NONCE = (NONCE_KEY << 64n) | 4n;

interface SponsorRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

type SponsorAnswer = { status: number; body: unknown } | undefined;

/** The sponsor under test: nonce from a fixed lane, sign through abstractjs's own sponsor code. */
async function startSponsor() {
  const requests: SponsorRequest[] = [];
  const override: { answer?: (req: SponsorRequest) => SponsorAnswer } = {};
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      const record = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: text === '' ? undefined : JSON.parse(text),
      };
      requests.push(record);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const forced = override.answer?.(record);
      if (forced) return send(forced.status, forced.body);
      const route = /^\/v1\/sponsorship\/(nonce|sign)\/(\d+)\/(0x[0-9a-fA-F]{40})$/.exec(record.path);
      if (record.method === 'GET' && route?.[1] === 'nonce' && route[3] === TANK) {
        return send(200, { nonceKey: NONCE_KEY.toString(), nonce: SPONSOR_NONCE.toString() });
      }
      if (record.method === 'POST' && route?.[1] === 'sign' && route[3] === TANK) {
        const signed = await referenceSponsorQuote({
          quote: record.body as MeeQuote,
          ownerPrivateKey: TANK_OWNER_KEY,
        });
        return send(200, signed);
      }
      send(404, { errors: ['no route'] });
    })().catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [String(error)] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    override,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('MEE harness: abstractjs getQuote with a self-hosted sponsor', () => {
  let node: MeeNode;
  let sponsor: Awaited<ReturnType<typeof startSponsor>>;
  const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [user.address, 1n] });
  const quoteWith = (extra: { customHeaders?: Record<string, string> } = {}) =>
    meeGetQuote({
      nodeUrl: node.url,
      sponsorUrl: sponsor.url,
      customHeaders: extra.customHeaders ?? HEADERS,
      gasTank: { chainId: base.id, address: TANK, token: USDC },
      calls: [{ to: USDC, data: transfer, gasLimit: 100_000n }],
      owner: user,
      chain: base,
    });

  before(async () => {
    node = await startMeeNode({ chains: [base], nodeAddress: NODE, tokenWeiPerGas: 3n });
    sponsor = await startSponsor();
  });
  after(async () => {
    await sponsor.close();
    await node.close();
  });

  it('calls nonce then sign with the custom headers, and returns the quote signed as abstractjs signs it', async () => {
    node.requests.length = 0;
    node.quotes.length = 0;
    sponsor.requests.length = 0;
    const { quote, rpcCalls } = await quoteWith();

    assert.deepEqual(
      sponsor.requests.map((r) => `${r.method} ${r.path}`),
      [`GET /v1/sponsorship/nonce/8453/${TANK}`, `POST /v1/sponsorship/sign/8453/${TANK}`],
    );
    for (const r of sponsor.requests) {
      assert.equal(r.headers['x-patron-key'], 'pk_test_123');
      // Sent on the GET too: a non-simple header, so browsers preflight both calls.
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.headers['x-api-key'], undefined, 'the node API key is not sent to the sponsor');
    }
    // The node saw info then quote; the quote request carries the sponsor's nonce as paymentInfo.nonce.
    assert.deepEqual(
      node.requests.filter((r) => r.path === '/v1/info' || r.path === '/v1/quote').map((r) => r.path),
      ['/v1/info', '/v1/quote'],
    );
    const quoteRequest = node.requests.find((r) => r.path === '/v1/quote')?.body as {
      paymentInfo: Record<string, unknown>;
    };
    assert.equal(quoteRequest.paymentInfo.nonce, SPONSOR_NONCE.toString());
    assert.equal(quoteRequest.paymentInfo.sponsored, true);
    assert.equal(quoteRequest.paymentInfo.sponsorshipUrl, sponsor.url);
    // The sign request's body is the node's whole quote, unchanged.
    const [nodeQuote] = node.quotes;
    assert.ok(nodeQuote);
    assert.deepEqual(sponsor.requests[1]?.body, nodeQuote);
    assert.equal(nodeQuote.userOps[0]?.userOp.nonce, SPONSOR_NONCE.toString());
    // The SDK read only what sdkChainTransport scripts.
    assert.deepEqual([...new Set(rpcCalls.map((c) => c.method))].sort(), ['eth_call', 'eth_getCode']);

    // What came back is the node's quote with only userOps[0].userOp.signature filled.
    const signature = quote.userOps[0]?.userOp.signature;
    assert.ok(signature);
    const unsigned = cloneMeeQuote(quote);
    const payment = unsigned.userOps[0];
    assert.ok(payment);
    payment.userOp.signature = '0x';
    assert.deepEqual(unsigned, nodeQuote);

    assert.equal(slice(signature, 0, 4), '0x177eee00', 'SIG_TYPE_SIMPLE prefix');
    const { root, lowerBound: lower, upperBound: upper, proof, signature: sig } = decodeSponsorSignature(signature);
    assert.equal(root, quote.hash);
    assert.equal(root, quoteRoot(quote));
    assert.equal(lower, Number(payment.lowerBoundTimestamp));
    assert.equal(upper, Number(payment.upperBoundTimestamp));
    assert.ok(SimpleMerkleTree.verify(root, payment.meeUserOpHash, proof), 'proof of leaf 0');
    assert.equal(size(sig), 65);
    assert.equal(await recoverMessageAddress({ message: { raw: root }, signature: sig }), tankOwner.address);
    // RFC 6979: signing again gives the same bytes, so Patron's answer can be compared byte for byte.
    const again = await referenceSponsorQuote({ quote: nodeQuote, ownerPrivateKey: TANK_OWNER_KEY });
    assert.equal(again.userOps[0]?.userOp.signature, signature);
  });

  it('the payment op transfers tokenWeiAmount of the tank token to the node, priced per gas', async () => {
    const { quote } = await quoteWith();
    const payment = quote.userOps[0];
    assert.ok(payment);
    assert.equal(payment.userOp.sender, TANK);
    const amount = BigInt(quote.paymentInfo.tokenWeiAmount);
    const gas = quote.userOps.reduce((sum, op) => sum + BigInt(op.maxGasLimit), 0n);
    assert.equal(amount, gas * 3n);
    assert.equal(payment.userOp.callData, encodePaymentCallData({ token: USDC, node: NODE, amount }));
    assert.equal(quote.userOps[1]?.userOp.sender, DEFAULT_USER_NEXUS);
  });

  it('turns a sponsor error body into the message getQuote throws', async () => {
    const cases: { body: unknown; message: string }[] = [
      { body: { errors: ['tank retired'] }, message: 'tank retired' },
      { body: { errors: [{ msg: 'not allowed', path: 'x-patron-key' }] }, message: 'x-patron-key: not allowed' },
      { body: { errors: [{ msg: 'a' }, { msg: 'b', path: 'p' }] }, message: 'a\np: b' },
      { body: { error: 'over budget' }, message: 'over budget' },
      { body: { message: 'plain message' }, message: 'plain message' },
    ];
    try {
      for (const { body, message } of cases) {
        for (const on of ['GET', 'POST']) {
          sponsor.override.answer = (r) => (r.method === on ? { status: 403, body } : undefined);
          await assert.rejects(quoteWith(), (error: Error) => {
            assert.equal(error.message, message, `${on} ${JSON.stringify(body)}`);
            return true;
          });
        }
      }
      // The SDK parses the body before it looks at the status: a body that is not JSON surfaces as a parse error.
      sponsor.override.answer = (r) => (r.method === 'GET' ? { status: 403, body: undefined } : undefined);
      await assert.rejects(quoteWith(), SyntaxError);
    } finally {
      delete sponsor.override.answer;
    }
  });

  it('abstractjs signs any self-consistent quote, and refuses only a root that does not match the leaves', async () => {
    const { quote } = await quoteWith();
    const unsigned = cloneMeeQuote(quote);
    const op0 = unsigned.userOps[0];
    assert.ok(op0);
    op0.userOp.signature = '0x';
    const attacks: Record<string, (q: MeeQuote) => void> = {
      'payment amount x1000': (q) => {
        const op = q.userOps[0];
        if (op)
          op.userOp.callData = encodePaymentCallData({
            token: USDC,
            node: NODE,
            amount: BigInt(q.paymentInfo.tokenWeiAmount) * 1000n,
          });
      },
      'window widened to a year': (q) => {
        const op = q.userOps[0];
        if (op) op.upperBoundTimestamp = String(Number(op.lowerBoundTimestamp) + 365 * 86_400);
      },
      'a second op spending from the tank': (q) => {
        const op = q.userOps[1];
        if (op) op.userOp.sender = TANK;
      },
      'payment nonce on another lane': (q) => {
        const op = q.userOps[0];
        if (op) op.userOp.nonce = ((1n << 64n) | 0n).toString();
      },
    };
    for (const [name, attack] of Object.entries(attacks)) {
      const mutated = cloneMeeQuote(unsigned);
      attack(mutated);
      const rehashed = rehashMeeQuote(mutated);
      assert.notEqual(rehashed.hash, unsigned.hash, `${name}: the root moves`);
      // The reference sponsor checks only that the leaves it is handed give the root: it signs the attack.
      const signed = await referenceSponsorQuote({ quote: rehashed, ownerPrivateKey: TANK_OWNER_KEY });
      const { root } = decodeSponsorSignature(signed.userOps[0]?.userOp.signature ?? '0x');
      assert.equal(root, rehashed.hash, name);
      // Changed fields under the old hashes: still "valid" to it, as it never recomputes a hash from an op.
      const stale = await referenceSponsorQuote({ quote: mutated, ownerPrivateKey: TANK_OWNER_KEY });
      assert.equal(decodeSponsorSignature(stale.userOps[0]?.userOp.signature ?? '0x').root, unsigned.hash, name);
    }
    // A root that is not the leaves' root is the one thing it refuses.
    const forged = { ...cloneMeeQuote(unsigned), hash: quoteLeaves(unsigned)[0] ?? unsigned.hash };
    await assert.rejects(
      referenceSponsorQuote({ quote: forged, ownerPrivateKey: TANK_OWNER_KEY }),
      /Invalid merkle tree/,
    );
  });

  it('a node that corrupts its quote (mutate hook) reaches the sponsor as a self-consistent quote', async () => {
    const corrupt = await startMeeNode({
      chains: [base],
      nodeAddress: NODE,
      mutate: (q) => {
        const c = cloneMeeQuote(q);
        const op = c.userOps[0];
        if (op) op.userOp.callData = encodePaymentCallData({ token: USDC, node: NODE, amount: 10n ** 12n });
        return rehashMeeQuote(c);
      },
    });
    try {
      sponsor.requests.length = 0;
      const { quote } = await meeGetQuote({
        nodeUrl: corrupt.url,
        sponsorUrl: sponsor.url,
        customHeaders: HEADERS,
        gasTank: { chainId: base.id, address: TANK, token: USDC },
        calls: [{ to: USDC, data: transfer }],
        owner: user,
        chain: base,
      });
      assert.deepEqual(sponsor.requests[1]?.body, corrupt.quotes[0]);
      assert.equal(quote.hash, corrupt.quotes[0]?.hash);
      assert.equal(quote.hash, quoteRoot(quote));
      assert.equal(
        quote.userOps[0]?.userOp.callData,
        encodePaymentCallData({ token: USDC, node: NODE, amount: 10n ** 12n }),
      );
      // paymentInfo still states the honest price: only a sponsor that decodes the op sees the difference.
      assert.notEqual(quote.paymentInfo.tokenWeiAmount, (10n ** 12n).toString());
    } finally {
      await corrupt.close();
    }
  });

  it('reads the chain through an EDR dev chain when given its RPC (a chain id outside the SDK Cancun list)', async () => {
    const dev = await startDevChain({
      chainId: 31337,
      signerAddress: privateKeyToAccount(testKey('mee-harness-signer')).address,
      ownerPrivateKey: testKey('mee-harness-owner'),
      depositWei: 0n,
    });
    const seen: { method: string; to?: string }[] = [];
    const served = await serveChainOverHttp({
      chainId: dev.chain.chainId,
      request: (a) => {
        const [call] = (a.params ?? []) as [{ to?: string } | undefined];
        seen.push({ method: a.method, ...(a.method === 'eth_call' && call?.to ? { to: call.to.toLowerCase() } : {}) });
        return dev.chain.request(a);
      },
      close: () => dev.chain.close(),
    });
    const chain = defineChain({
      id: 31337,
      name: 'dev',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [served.url] } },
    });
    const devNode = await startMeeNode({ chains: [chain], nodeAddress: NODE });
    try {
      const { quote } = await meeGetQuote({
        nodeUrl: devNode.url,
        sponsorUrl: sponsor.url,
        customHeaders: HEADERS,
        gasTank: { chainId: chain.id, address: TANK, token: USDC },
        calls: [{ to: USDC, data: transfer }],
        owner: user,
        chain,
        rpcUrl: served.url,
      });
      assert.ok(
        seen.some((c) => c.method === 'eth_getBlockByNumber'),
        'the Cancun check reached the chain',
      );
      assert.ok(
        seen.some((c) => c.to === entryPoint07Address.toLowerCase()),
        'getNonce reached the EntryPoint',
      );
      assert.equal(quote.userOps[0]?.chainId, '31337');
      assert.equal(BigInt(quote.userOps[1]?.userOp.nonce ?? '1') & 0xffffffffffffffffn, 0n, 'a fresh lane');
      const { root } = decodeSponsorSignature(quote.userOps[0]?.userOp.signature ?? '0x');
      assert.equal(root, quote.hash);
    } finally {
      await devNode.close();
      await served.close();
      await dev.close();
    }
  });
});
