import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, type Hex, parseEther } from 'viem';
import { httpChainRuntime } from '../src/chain/chainRegistry.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { DEFAULT_SIGNING_BOUNDS } from '../src/config/boundsSettings.js';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { worstCaseCostV06 } from '../src/paymaster/entryPoints/v06/prefundV06.js';
import { tipCap } from '../src/paymaster/signingBounds.js';
import {
  buildDeployingOp,
  type PatronFixture,
  paymasterDeposit,
  signAccount,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { createTenant, createTestContext } from './helpers/testContext.js';

/**
 * The drain (issue 10): anyone holding a dApp's public API key asks for a signature over an op with inflated
 * fees or gas, then submits handleOps with themselves as bundler and beneficiary, and the EntryPoint pays the
 * inflated fee out of the paymaster's deposit to them. Played here on the in-process chain: every paymaster
 * method refuses such an op at signing, while an op at market fees is still sponsored and executes, and what
 * the attacker-bundler is paid per gas stays within the chain's base fee plus the tip cap.
 */
let app: RpcFixture;
let fx: PatronFixture;
let usdc: DevTokenInfo;
let salt = 100n;

before(async () => {
  app = await startRpcFixture({ tokens: true });
  fx = app.fx;
  usdc = fx.tokens[0] as DevTokenInfo;
});
after(() => app.close());

const ETH = 10n ** 18n;
const hex = (n: bigint) => `0x${n.toString(16)}`;

/** The op as clients send it; fees and limits as given (hex). */
function wire(op: UserOperationV06, withGas = true) {
  return {
    sender: op.sender,
    nonce: hex(op.nonce),
    initCode: op.initCode,
    callData: op.callData,
    maxFeePerGas: hex(op.maxFeePerGas),
    maxPriorityFeePerGas: hex(op.maxPriorityFeePerGas),
    ...(withGas
      ? {
          callGasLimit: hex(op.callGasLimit),
          verificationGasLimit: hex(op.verificationGasLimit),
          preVerificationGas: hex(op.preVerificationGas),
        }
      : {}),
    signature: '0x',
  };
}

/** The chain's fees as a wallet reads them: the latest base fee and the node's suggested tip. */
async function marketFees(): Promise<{ baseFee: bigint; tip: bigint; maxFeePerGas: bigint }> {
  const block = await fx.client.getBlock();
  const tip = BigInt((await fx.chain.request({ method: 'eth_maxPriorityFeePerGas' })) as Hex);
  const baseFee = block.baseFeePerGas ?? 0n;
  return { baseFee, tip, maxFeePerGas: 2n * baseFee + tip };
}

/** Every paymaster method and mode that can lead to a signature, for one op. */
function everyMethod(op: UserOperationV06): Array<[string, string, unknown[]]> {
  const chainHex = hex(BigInt(fx.chain.chainId));
  const erc20 = { mode: 'ERC20', calculateGasLimits: false, tokenInfo: { feeTokenAddress: usdc.address } };
  return [
    [
      'pm_sponsorUserOperation SPONSORED',
      'pm_sponsorUserOperation',
      [wire(op), { mode: 'SPONSORED', calculateGasLimits: false }],
    ],
    [
      'pm_getFeeQuoteOrData SPONSORED',
      'pm_getFeeQuoteOrData',
      [wire(op), { mode: 'SPONSORED', calculateGasLimits: false }],
    ],
    ['pm_getFeeQuoteOrData (no mode)', 'pm_getFeeQuoteOrData', [wire(op), {}]],
    [
      'pm_getFeeQuoteOrData ERC20 quote',
      'pm_getFeeQuoteOrData',
      [wire(op), { mode: 'ERC20', calculateGasLimits: false }],
    ],
    ['pm_sponsorUserOperation ERC20', 'pm_sponsorUserOperation', [wire(op), erc20]],
    ['ERC-7677 stub', 'pm_getPaymasterStubData', [wire(op), fx.entryPoint, chainHex, { mode: 'SPONSORED' }]],
    ['ERC-7677 stub ERC20', 'pm_getPaymasterStubData', [wire(op), fx.entryPoint, chainHex, erc20]],
    ['ERC-7677 data', 'pm_getPaymasterData', [wire(op), fx.entryPoint, chainHex, { mode: 'SPONSORED' }]],
    ['ERC-7677 data ERC20', 'pm_getPaymasterData', [wire(op), fx.entryPoint, chainHex, erc20]],
  ];
}

async function refusedEverywhere(op: UserOperationV06, rule: string): Promise<void> {
  // The stub signs nothing and its gas fields are placeholders the wallet estimates after it: only fees apply.
  const gasRule = !rule.endsWith('FeePerGas');
  for (const [name, method, params] of everyMethod(op)) {
    if (gasRule && method === 'pm_getPaymasterStubData') continue;
    const r = await app.rpc(method, params);
    assert.equal(r.status, 400, `${name}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error?.code, -32040, `${name}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.result, undefined, name);
    const data = r.body.error?.data as Record<string, string> | undefined;
    assert.equal(data?.rule, rule, name);
    assert.ok(BigInt(data?.value ?? '0') > BigInt(data?.bound ?? '0'), `${name}: the value is above the bound`);
    assert.match(r.body.error?.message ?? '', /^Out of bounds: /, name);
  }
}

const depositOf = () => paymasterDeposit(fx);

describe('the drain: attacker-chosen fees and gas are refused at signing', () => {
  test('1,000 ETH per gas, and 2^256-1, as tip and as maxFeePerGas: refused by every method and mode', async () => {
    const market = await marketFees();
    for (const inflated of [1000n * ETH, (1n << 256n) - 1n]) {
      const op = { ...(await buildDeployingOp(fx, salt++)), maxFeePerGas: inflated, maxPriorityFeePerGas: inflated };
      await refusedEverywhere(op, 'maxPriorityFeePerGas');
      await refusedEverywhere({ ...op, maxPriorityFeePerGas: market.tip }, 'maxFeePerGas');
    }
  });

  test('a tip just above the cap is refused; the cap itself is the chain tip × 3', async () => {
    const market = await marketFees();
    const cap = tipCap(DEFAULT_SIGNING_BOUNDS, market);
    assert.equal(cap, market.tip * 3n);
    const op = {
      ...(await buildDeployingOp(fx, salt++)),
      maxFeePerGas: cap + 4n * market.baseFee,
      maxPriorityFeePerGas: cap + 1n,
    };
    const r = await app.rpc('pm_sponsorUserOperation', [wire(op), { mode: 'SPONSORED', calculateGasLimits: false }]);
    assert.equal(r.body.error?.code, -32040);
    assert.deepEqual(r.body.error?.data, {
      rule: 'maxPriorityFeePerGas',
      value: (cap + 1n).toString(),
      bound: cap.toString(),
      unit: 'wei per gas',
      chainTip: market.tip.toString(),
    });
  });

  test('absurd gas limits are refused: each field, by every method', async () => {
    const market = await marketFees();
    const base = {
      ...(await buildDeployingOp(fx, salt++)),
      maxFeePerGas: market.maxFeePerGas,
      maxPriorityFeePerGas: market.tip,
    };
    await refusedEverywhere({ ...base, callGasLimit: 10n ** 9n }, 'callGasLimit');
    await refusedEverywhere({ ...base, verificationGasLimit: 10n ** 8n }, 'verificationGasLimit');
    await refusedEverywhere({ ...base, preVerificationGas: 10n ** 8n }, 'preVerificationGas');
  });

  test("the worst-case cost cap (the operator's per-dApp limit) is applied to both modes, then lifted", async () => {
    const market = await marketFees();
    const op = {
      ...(await buildDeployingOp(fx, salt++)),
      maxFeePerGas: market.maxFeePerGas,
      maxPriorityFeePerGas: market.tip,
    };
    const cost = worstCaseCostV06(op, op.maxFeePerGas);
    await app.ctx.deps.accounts.setDappLimits({
      dappId: app.tenant.dappId,
      limits: { bounds: { maxOpCostWei: (cost - 1n).toString() } },
    });
    try {
      await refusedEverywhere(op, 'maxOpCost');
    } finally {
      await app.ctx.deps.accounts.setDappLimits({ dappId: app.tenant.dappId, limits: {} });
    }
    const r = await app.rpc('pm_sponsorUserOperation', [wire(op), { mode: 'SPONSORED', calculateGasLimits: false }]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });

  test('an operator may loosen a bound for one dApp: a tip above the default cap is then signed', async () => {
    const market = await marketFees();
    const op = {
      ...(await buildDeployingOp(fx, salt++)),
      maxFeePerGas: market.maxFeePerGas + 5n * market.tip,
      maxPriorityFeePerGas: 5n * market.tip,
    };
    const sponsor = () =>
      app.rpc('pm_sponsorUserOperation', [wire(op), { mode: 'SPONSORED', calculateGasLimits: false }]);
    assert.equal((await sponsor()).body.error?.code, -32040);
    await app.ctx.deps.accounts.setDappLimits({ dappId: app.tenant.dappId, limits: { bounds: { tipMultiplier: 6 } } });
    try {
      assert.equal((await sponsor()).status, 200);
    } finally {
      await app.ctx.deps.accounts.setDappLimits({ dappId: app.tenant.dappId, limits: {} });
    }
  });
});

describe('an op at market fees is still sponsored and executes, with the attacker as bundler and beneficiary', () => {
  test('handleOps pays the attacker no more per gas than baseFee + the tip cap', async () => {
    const market = await marketFees();
    const op: UserOperationV06 = {
      ...(await buildDeployingOp(fx, salt++)),
      maxFeePerGas: market.maxFeePerGas,
      maxPriorityFeePerGas: tipCap(DEFAULT_SIGNING_BOUNDS, market),
    };
    const r = await app.rpc('pm_sponsorUserOperation', [
      wire(op, false),
      { mode: 'SPONSORED', calculateGasLimits: true },
    ]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const res = r.body.result as Record<string, unknown>;
    const sponsored: UserOperationV06 = {
      ...op,
      paymasterAndData: res.paymasterAndData as Hex,
      callGasLimit: BigInt(res.callGasLimit as number),
      verificationGasLimit: BigInt(res.verificationGasLimit as number),
      preVerificationGas: BigInt(res.preVerificationGas as string),
    };
    const attacker: Address = fx.bundler.account.address;
    const depositBefore = await depositOf();
    const balanceBefore = await fx.client.getBalance({ address: attacker });
    const { receipt, events } = await submitHandleOps(fx, [await signAccount(fx, sponsored)]);
    assert.equal(receipt.status, 'success');
    const event = events[0]?.args;
    assert.equal(event?.success, true);
    const paid = depositBefore - (await depositOf());
    assert.equal(paid, event?.actualGasCost, 'the deposit pays exactly the op');
    const block = await fx.client.getBlock({ blockNumber: receipt.blockNumber });
    const perGas = (event?.actualGasCost ?? 0n) / (event?.actualGasUsed ?? 1n);
    assert.ok(perGas <= (block.baseFeePerGas ?? 0n) + op.maxPriorityFeePerGas, 'paid at most baseFee + the tip cap');
    const gained = (await fx.client.getBalance({ address: attacker })) - balanceBefore;
    // The beneficiary's net gain is the tip it set itself, on the gas the op used: bounded, not the deposit.
    assert.ok(gained <= op.maxPriorityFeePerGas * (event?.actualGasUsed ?? 0n), `gained ${gained}`);
    assert.ok(paid < parseEther('0.01'));
  });
});

describe('a chain whose fees cannot be read', () => {
  test('denies with -32041 (HTTP 503, which clients retry): it does not sign', async () => {
    // A real HTTP JSON-RPC URL on which nothing listens: the fee read fails, as with an RPC outage.
    const down = httpChainRuntime({
      chainId: 31337,
      rpcUrl: 'http://127.0.0.1:9/',
      entryPoint: fx.entryPoint,
      paymaster: fx.paymaster,
      timeoutMs: 2000,
    });
    const ctx = await createTestContext({ chains: [down] });
    try {
      const tenant = await createTenant(ctx.deps);
      const op = await buildDeployingOp(fx, salt++);
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/api/v1/31337/${tenant.apiKey}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'pm_sponsorUserOperation',
          params: [wire(op), { mode: 'SPONSORED', calculateGasLimits: false }],
        }),
      });
      assert.equal(res.statusCode, 503);
      const body = res.json() as { error?: { code: number; message: string; data?: unknown }; result?: unknown };
      assert.equal(body.result, undefined);
      assert.equal(body.error?.code, -32041);
      assert.match(body.error?.message ?? '', /Chain 31337: its current fees cannot be read/);
      assert.deepEqual(body.error?.data, { rule: 'chainFees', chainId: 31337 });
    } finally {
      await ctx.close();
    }
  });
});
