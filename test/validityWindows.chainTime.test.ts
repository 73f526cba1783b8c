import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, type Hex, hexToBigInt, hexToBytes, pad, slice, toHex } from 'viem';
import type { EntryPointVersion } from '../src/chain/chainRegistry.js';
import { handleAttackerOp, installAttackerAccount, NOTHING } from './helpers/attackerAccount.js';
import { fixtureChainRuntime, KEYS, type PatronFixture, startPatronFixture } from './helpers/patronPaymasterV06.js';
import { createTenant, createTestContext, type Tenant, type TestContext, testConfig } from './helpers/testContext.js';

/**
 * Validity windows by the chain's time (docs/reference/json-rpc.md, "Validity window"): the simulation and the EntryPoint check a window
 * against block.timestamp, so a chain whose last block is older than the skew (the idle dev chain, a quiet L2) got
 * every simulated request refused with AA32 while the window came from the server's clock alone, and a chain ahead
 * of the server got windows already closed for it. Each case through the app with `calculateGasLimits` (a
 * simulation at the latest block's time), on v0.6 and v0.7, and each signed op executed on chain.
 */
let fx: PatronFixture;
before(async () => {
  fx = await startPatronFixture();
});
after(() => fx.close());

const defaults = testConfig();
const SKEW = defaults.paymaster.sponsorship.validAfterSkewSeconds;
/** The default validity a request without `expiry` gets. */
const EXPIRY = defaults.paymaster.sponsorship.defaultExpirySeconds;

/** A Patron on the fixture's chain with a clock `offsetMs` from the real one; fees read afresh on every request. */
async function patron(offsetMs: number): Promise<{ ctx: TestContext; tenant: Tenant }> {
  const ctx = await createTestContext({
    chains: [fixtureChainRuntime(fx)],
    signerKey: hexToBytes(KEYS.signer),
    now: () => Date.now() + offsetMs,
    config: { paymaster: { ...defaults.paymaster, fees: { refreshMs: 0, maxAgeMs: 0 } } },
  });
  return { ctx, tenant: await createTenant(ctx.deps) };
}

let next = 0xc10c0000n;
async function sponsorAndExecute(ctx: TestContext, tenant: Tenant, v: EntryPointVersion) {
  const sender = pad(toHex(next++), { size: 20 }) as Address;
  await installAttackerAccount(fx.client, sender);
  const block = await fx.client.getBlock();
  const op = {
    sender,
    nonce: '0x0',
    callData: NOTHING,
    maxFeePerGas: toHex(2n * (block.baseFeePerGas ?? 0n) + 1_000_000_000n),
    maxPriorityFeePerGas: toHex(1_000_000_000n),
    signature: '0x',
  };
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/${fx.chain.chainId}/${tenant.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'pm_getPaymasterData',
      params: [op, fx.entryPoints[v], toHex(fx.chain.chainId), { calculateGasLimits: true }],
    }),
  });
  const body = res.json() as { result?: Record<string, unknown>; error?: unknown };
  assert.equal(res.statusCode, 200, JSON.stringify(body));
  assert.ok(body.result);
  // The window: v0.6 paymasterAndData [20] mode, [21:27] validUntil, [27:33] validAfter; v0.7+ the same after 52.
  const fields =
    v === '0.6'
      ? (body.result.paymasterAndData as Hex)
      : (`${body.result.paymaster as Hex}${'0'.repeat(64)}${(body.result.paymasterData as Hex).slice(2)}` as Hex);
  const at = v === '0.6' ? 21 : 53;
  const window = {
    validUntil: Number(hexToBigInt(slice(fields, at, at + 6))),
    validAfter: Number(hexToBigInt(slice(fields, at + 6, at + 12))),
  };
  const { receipt, event } = await handleAttackerOp({
    bundler: fx.bundler,
    version: v,
    entryPoint: fx.entryPoints[v],
    op,
    answer: body.result,
  });
  assert.equal(event.success, true);
  const included = await fx.client.getBlock({ blockNumber: receipt.blockNumber });
  return { window, signedAt: block.timestamp, includedAt: included.timestamp };
}

describe("validity windows follow the chain's time", () => {
  test('an idle chain an hour behind the server: the window opens at its time, the op simulates and executes', async () => {
    // The server's clock an hour ahead of the chain's (which follows real time): the same as a chain idle for an hour.
    const { ctx, tenant } = await patron(3_600_000);
    try {
      for (const v of ['0.6', '0.7'] as const) {
        const { window, signedAt } = await sponsorAndExecute(ctx, tenant, v);
        const server = Math.floor(Date.now() / 1000) + 3600;
        assert.ok(window.validAfter <= Number(signedAt) - SKEW, `v${v}: opens by the chain's time`);
        assert.ok(
          window.validUntil >= server + EXPIRY - 1 && window.validUntil <= server + EXPIRY + 1,
          `v${v}: closes the default expiry after the server's time`,
        );
      }
    } finally {
      await ctx.close();
    }
  });

  test('a chain two hours ahead of the server: the window is not already closed for it; the op executes', async () => {
    await fx.client.request({ method: 'evm_increaseTime', params: [7200] } as never);
    await fx.client.request({ method: 'evm_mine', params: [] } as never);
    const { ctx, tenant } = await patron(0);
    try {
      for (const v of ['0.6', '0.7'] as const) {
        const { window, signedAt, includedAt } = await sponsorAndExecute(ctx, tenant, v);
        assert.ok(Number(signedAt) > Date.now() / 1000 + 7000, 'the chain is ahead');
        assert.ok(
          window.validUntil >= Number(signedAt) + EXPIRY,
          `v${v}: closes the default expiry after the chain's time`,
        );
        assert.ok(window.validAfter <= Date.now() / 1000 - SKEW + 1, `v${v}: opens by the server's time`);
        assert.ok(Number(includedAt) <= window.validUntil);
      }
    } finally {
      await ctx.close();
    }
  });
});
