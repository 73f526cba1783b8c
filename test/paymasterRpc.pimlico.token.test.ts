import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, getAddress, hexToBigInt, toHex } from 'viem';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { MODE_TOKEN } from '../src/paymaster/entryPoints/paymasterModes.js';
import { decodePaymasterAndDataV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { COUNTER_ADDRESS } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, newSimpleAccountOp, rpcV2 } from './helpers/rpcV07.js';

/**
 * Pimlico's ERC-20 dialect through /api/v2: `pimlico_getTokenQuotes` (what permissionless's
 * prepareUserOperationForErc20Paymaster reads to size the approval) and the `{ token }` ERC-7677 context (what it
 * then sends to pm_getPaymasterStubData / pm_getPaymasterData), which is the ERC20 mode in that token. The flow
 * through the real SDK and alto is test/e2e.sdkV07.token.test.ts.
 */
let app: RpcFixture;
let usdc: DevTokenInfo;
let pdt: DevTokenInfo;
before(async () => {
  app = await startRpcFixture({ tokens: true });
  [usdc, pdt] = app.fx.tokens as [DevTokenInfo, DevTokenInfo];
});
after(() => app.close());

const chainIdHex = () => toHex(app.fx.chain.chainId);
const UNKNOWN: Address = '0x000000000000000000000000000000000000dEaD';

interface WireQuote {
  paymaster: string;
  token: string;
  postOpGas: string;
  exchangeRate: string;
  exchangeRateNativeToUsd: string;
}

const quotes = async (entryPoint: Address, tokens: readonly string[]) => {
  const r = await rpcV2(app, 'pimlico_getTokenQuotes', [{ tokens }, entryPoint, chainIdHex()]);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return (r.body.result as { quotes: WireQuote[] }).quotes;
};

describe('pimlico_getTokenQuotes', () => {
  for (const version of ['0.7', '0.8', '0.9'] as const) {
    test(`v${version}: the EntryPoint's paymaster, rates with the markup, postOpGas 55,000; unknown tokens left out`, async () => {
      const q = await quotes(app.fx.entryPoints[version], [
        usdc.address.toLowerCase(),
        UNKNOWN,
        pdt.address,
        usdc.address,
      ]);
      assert.deepEqual(
        q.map((x) => x.token),
        [getAddress(usdc.address), getAddress(pdt.address)],
        'in the order asked, each once, the unknown one left out',
      );
      for (const x of q) {
        assert.equal(x.paymaster, app.fx.paymasters[version]);
        // POST_OP_OVERHEAD 50,000 + the penalty bound on the 50,000 postOp limit (10 %).
        assert.equal(hexToBigInt(x.postOpGas as `0x${string}`), 55_000n);
        // ETH 3000 USD, 6 decimals (Pimlico's scale).
        assert.equal(hexToBigInt(x.exchangeRateNativeToUsd as `0x${string}`), 3_000_000_000n);
        assert.deepEqual(Object.keys(x).sort(), [
          'exchangeRate',
          'exchangeRateNativeToUsd',
          'paymaster',
          'postOpGas',
          'token',
        ]);
      }
      // USDC: 3000 × 10^6 base units per ETH, × 1.1 (its 10 % premium); PDT at 0.25 USD, 18 decimals, no premium.
      assert.equal(hexToBigInt(q[0]?.exchangeRate as `0x${string}`), 3_300_000_000n);
      assert.equal(hexToBigInt(q[1]?.exchangeRate as `0x${string}`), 12_000n * 10n ** 18n);
    });
  }

  test('v0.6: its paymaster, postOpGas = POST_OP_OVERHEAD (the 3 × verificationGasLimit prefund is not in it)', async () => {
    const [q] = await quotes(app.fx.entryPoints['0.6'], [usdc.address]);
    assert.equal(q?.paymaster, app.fx.paymasters['0.6']);
    assert.equal(hexToBigInt(q?.postOpGas as `0x${string}`), 50_000n);
  });

  test('no token the chain takes: an empty list, not an error (Pimlico documents it so)', async () => {
    assert.deepEqual(await quotes(app.fx.entryPoints['0.7'], [UNKNOWN]), []);
    assert.deepEqual(await quotes(app.fx.entryPoints['0.7'], []), []);
  });

  test('refused: an EntryPoint not served (-32602), another chain (-32002), malformed params (-32602)', async () => {
    const unserved = await rpcV2(app, 'pimlico_getTokenQuotes', [{ tokens: [usdc.address] }, UNKNOWN, chainIdHex()]);
    assert.equal(unserved.body.error?.code, -32602);
    assert.match(unserved.body.error?.message ?? '', /params\[1\]: EntryPoint 0x[0-9a-fA-F]{40} is not served here/);
    const other = await rpcV2(app, 'pimlico_getTokenQuotes', [
      { tokens: [usdc.address] },
      app.fx.entryPoints['0.7'],
      '0x1',
    ]);
    assert.equal(other.body.error?.code, -32002);
    const bad = await rpcV2(app, 'pimlico_getTokenQuotes', [{ tokens: ['usdc'] }, app.fx.entryPoints['0.7'], '0x1']);
    assert.equal(bad.body.error?.code, -32602);
    assert.match(bad.body.error?.message ?? '', /params\[0\]\.tokens\[0\]/);
  });
});

describe('the { token } ERC-7677 context', () => {
  const stub = async (context: Record<string, unknown>) => {
    const { op } = await newSimpleAccountOp(app.fx, '0.7', [{ to: COUNTER_ADDRESS, data: '0x01' }]);
    return rpcV2(app, 'pm_getPaymasterStubData', [hexWire(op), app.fx.entryPoints['0.7'], chainIdHex(), context]);
  };

  test('is the ERC20 mode in that token: the stub is a token-mode stub', async () => {
    const r = await stub({ token: usdc.address });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const d = r.body.result ?? {};
    const decoded = decodePaymasterAndDataV07(
      `${String(d.paymaster)}${'00'.repeat(32)}${String(d.paymasterData).slice(2)}` as `0x${string}`,
    );
    assert.equal(decoded.fields.mode, MODE_TOKEN);
    assert.equal(decoded.fields.mode === MODE_TOKEN ? getAddress(decoded.fields.token) : '', getAddress(usdc.address));
    assert.equal(hexToBigInt(d.paymasterPostOpGasLimit as `0x${string}`), 50_000n, 'the token mode has a postOp');
  });

  test('beside mode SPONSORED, or beside another tokenInfo token: -32602 saying why', async () => {
    const sponsored = await stub({ token: usdc.address, mode: 'SPONSORED' });
    assert.equal(sponsored.body.error?.code, -32602);
    assert.match(sponsored.body.error?.message ?? '', /params\[3\]\.token: .*cannot go with mode "SPONSORED"/);
    const two = await stub({ token: usdc.address, tokenInfo: { feeTokenAddress: pdt.address } });
    assert.equal(two.body.error?.code, -32602);
    assert.match(two.body.error?.message ?? '', /params\[3\]\.token: .* is not the token tokenInfo names/);
  });

  test('a token the chain does not take is refused by name', async () => {
    const r = await stub({ token: UNKNOWN });
    assert.ok(r.body.error, JSON.stringify(r.body));
    assert.match(r.body.error.message, /0x000000000000000000000000000000000000dEaD/i);
  });
});
