import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, type Hex, hexToBigInt, pad, slice, toHex } from 'viem';
import type { EntryPointVersion } from '../src/chain/chainRegistry.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import {
  BURN_ALL,
  burnCallData,
  handleAttackerOp,
  installAttackerAccount,
  NOTHING,
} from './helpers/attackerAccount.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';

/**
 * The gas rules of the signing bounds through the app (docs/guides/signing-bounds.md, "Signing bounds"), with an attacker's own account
 * (helpers/attackerAccount.ts): an inflated preVerificationGas and an unused-gas penalty used as a payout are refused
 * by every method that signs, on every EntryPoint version; ERC-7562's verification gas limit holds on v0.7+; and with
 * `calculateGasLimits` Patron never answers limits its signature does not cover (an estimate out of bounds is
 * refused), while an estimate within them is answered under the caps it signs and executes on chain.
 */
let app: RpcFixture;
let usdc: DevTokenInfo;
before(async () => {
  app = await startRpcFixture({ tokens: true });
  usdc = app.fx.tokens[0] as DevTokenInfo;
});
after(() => app.close());

const VERSIONS: readonly EntryPointVersion[] = ['0.6', '0.7', '0.8', '0.9'];
const hex = (n: bigint) => toHex(n);
const chainHex = () => hex(BigInt(app.fx.chain.chainId));
const entryPointOf = (v: EntryPointVersion) => app.fx.entryPoints[v];

let nextAccount = 0xa77ac0000n;
/** A fresh attacker account (its nonce is 0 on every EntryPoint). */
async function attacker(): Promise<Address> {
  const address = pad(hex(nextAccount++), { size: 20 });
  await installAttackerAccount(app.fx.client, address);
  return address;
}

interface Gas {
  readonly callGasLimit?: bigint;
  readonly verificationGasLimit?: bigint;
  readonly preVerificationGas?: bigint;
}

/** The op as wallets send it (hex quantities), at the chain's fees; limits left out where `gas` has none. */
async function wireOp(sender: Address, callData: Hex, gas: Gas): Promise<Record<string, unknown>> {
  const block = await app.fx.client.getBlock();
  const tip = hexToBigInt((await app.fx.chain.request({ method: 'eth_maxPriorityFeePerGas' })) as Hex);
  return {
    sender,
    nonce: '0x0',
    callData,
    ...Object.fromEntries(Object.entries(gas).map(([k, v]) => [k, hex(v)])),
    maxFeePerGas: hex(2n * (block.baseFeePerGas ?? 0n) + tip),
    maxPriorityFeePerGas: hex(tip),
    signature: '0x',
  };
}

/** A JSON-RPC call through the app, on /api/v1 (every EntryPoint named by the call) or /api/v2 (Biconomy's v0.7). */
async function call(method: string, params: unknown[], url: 'v1' | 'v2' = 'v1') {
  const res = await app.ctx.app.inject({
    method: 'POST',
    url: `/api/${url}/${app.fx.chain.chainId}/${app.tenant.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return res.json() as {
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: Record<string, string> };
  };
}

/** Every method that signs on the version, with the op given (its limits the caller's). */
function everyMethod(
  v: EntryPointVersion,
  op: Record<string, unknown>,
): Array<[string, () => ReturnType<typeof call>]> {
  const ep = entryPointOf(v);
  const token = { token: usdc.address };
  const methods: Array<[string, () => ReturnType<typeof call>]> = [
    ['ERC-7677 data', () => call('pm_getPaymasterData', [op, ep, chainHex(), {}])],
    ['ERC-7677 data ERC20', () => call('pm_getPaymasterData', [op, ep, chainHex(), token])],
    ["Pimlico's pm_sponsorUserOperation", () => call('pm_sponsorUserOperation', [op, ep])],
  ];
  const biconomy = { mode: 'SPONSORED', calculateGasLimits: false };
  const erc20 = { mode: 'ERC20', calculateGasLimits: false, tokenInfo: { feeTokenAddress: usdc.address } };
  const url = v === '0.6' ? 'v1' : v === '0.7' ? 'v2' : undefined;
  if (url !== undefined) {
    methods.push(
      ["Biconomy's pm_sponsorUserOperation", () => call('pm_sponsorUserOperation', [op, biconomy], url)],
      ['pm_getFeeQuoteOrData SPONSORED', () => call('pm_getFeeQuoteOrData', [op, biconomy], url)],
      ['pm_getFeeQuoteOrData ERC20 (quote)', () => call('pm_getFeeQuoteOrData', [op, erc20], url)],
      ["Biconomy's pm_sponsorUserOperation ERC20", () => call('pm_sponsorUserOperation', [op, erc20], url)],
    );
  }
  if (v === '0.9') {
    const commit = { signingPhase: 'commit' };
    methods.push(['v0.9 parallel signing commit', () => call('pm_getPaymasterData', [op, ep, chainHex(), commit])]);
  }
  return methods;
}

async function refusedEverywhere(v: EntryPointVersion, op: Record<string, unknown>, rule: string) {
  for (const [name, send] of everyMethod(v, op)) {
    const r = await send();
    const what = `v${v} ${name}: ${JSON.stringify(r)}`;
    assert.equal(r.result, undefined, what);
    assert.equal(r.error?.code, -32040, what);
    assert.equal(r.error?.data?.rule, rule, what);
    assert.ok(BigInt(r.error?.data?.value ?? '0') > BigInt(r.error?.data?.bound ?? '0'), what);
  }
}

describe('preVerificationGas is bounded by what the op needs', () => {
  for (const v of VERSIONS) {
    test(`v${v}: 500,000 (within maxPreVerificationGas) is refused by every method; the bound itself is signed`, async () => {
      const sender = await attacker();
      const gas = { callGasLimit: 30_000n, verificationGasLimit: 100_000n };
      await refusedEverywhere(
        v,
        await wireOp(sender, NOTHING, { ...gas, preVerificationGas: 500_000n }),
        'preVerificationGasForSize',
      );
      const refused = await call('pm_getPaymasterData', [
        await wireOp(sender, NOTHING, { ...gas, preVerificationGas: 500_000n }),
        entryPointOf(v),
        chainHex(),
        {},
      ]);
      const data = refused.error?.data ?? {};
      const needed = BigInt(data.needed ?? '0');
      const bound = BigInt(data.bound ?? '0');
      // What the op's size needs (~50,000 gas for this op) × 1.1, the default.
      assert.ok(needed > 40_000n && needed < 60_000n, `needed ${needed}`);
      assert.equal(bound, (needed * 11n) / 10n);
      const at = await call('pm_getPaymasterData', [
        await wireOp(sender, NOTHING, { ...gas, preVerificationGas: bound }),
        entryPointOf(v),
        chainHex(),
        {},
      ]);
      assert.ok(at.result, JSON.stringify(at));
      const over = await call('pm_getPaymasterData', [
        await wireOp(sender, NOTHING, { ...gas, preVerificationGas: bound + 1n }),
        entryPointOf(v),
        chainHex(),
        {},
      ]);
      assert.equal(over.error?.data?.rule, 'preVerificationGasForSize');
    });
  }
});

describe('the unused-gas penalty is bounded (v0.7+) and ERC-7562 holds', () => {
  for (const v of VERSIONS) {
    test(`v${v}: an 8,000,000 callGasLimit doing nothing${v === '0.6' ? ' is signed (v0.6 has no penalty)' : ' is refused by every method; 1,000,009 is signed'}`, async () => {
      const sender = await attacker();
      const gas = { verificationGasLimit: 100_000n, preVerificationGas: 50_000n };
      const op = await wireOp(sender, NOTHING, { ...gas, callGasLimit: 8_000_000n });
      const data = () => call('pm_getPaymasterData', [op, entryPointOf(v), chainHex(), {}]);
      if (v === '0.6') {
        assert.ok((await data()).result);
        return;
      }
      await refusedEverywhere(v, op, 'unusedGasPenalty');
      assert.deepEqual((await data()).error?.data, {
        rule: 'unusedGasPenalty',
        value: '800000',
        bound: '100000',
        unit: 'gas',
        callGasLimit: '8000000',
      });
      const largest = await wireOp(sender, NOTHING, { ...gas, callGasLimit: 1_000_009n });
      assert.ok((await call('pm_getPaymasterData', [largest, entryPointOf(v), chainHex(), {}])).result);
      const next = await wireOp(sender, NOTHING, { ...gas, callGasLimit: 1_000_010n });
      const refused = await call('pm_getPaymasterData', [next, entryPointOf(v), chainHex(), {}]);
      assert.equal(refused.error?.data?.rule, 'unusedGasPenalty');
    });

    test(`v${v}: verificationGasLimit 500,000 is ${v === '0.6' ? 'signed' : 'refused by every method (ERC-7562), 499,999 signed'}`, async () => {
      const sender = await attacker();
      const gas = { callGasLimit: 30_000n, preVerificationGas: 50_000n };
      const op = await wireOp(sender, NOTHING, { ...gas, verificationGasLimit: 500_000n });
      if (v === '0.6') {
        assert.ok((await call('pm_getPaymasterData', [op, entryPointOf(v), chainHex(), {}])).result);
        return;
      }
      await refusedEverywhere(v, op, 'verificationGasLimit');
      const r = await call('pm_getPaymasterData', [op, entryPointOf(v), chainHex(), {}]);
      assert.equal(r.error?.data?.bound, '499999');
      const under = await wireOp(sender, NOTHING, { ...gas, verificationGasLimit: 499_999n });
      assert.ok((await call('pm_getPaymasterData', [under, entryPointOf(v), chainHex(), {}])).result);
    });
  }
});

/** The caps PatronPaymasterV07 reads from paymasterAndData: [65:73] verification, [73:81] call, [81:89] preVerificationGas. */
function capsOf(paymasterAndData: Hex) {
  const word = (from: number) => hexToBigInt(slice(paymasterAndData, from, from + 8));
  return { verificationGasLimit: word(65), callGasLimit: word(73), preVerificationGas: word(81) };
}

/** handleOps from the fixture's bundler; returns the op's UserOperationEvent. */
async function execute(v: EntryPointVersion, op: Record<string, unknown>, answer: Record<string, unknown>) {
  const { bundler } = app.fx;
  return (await handleAttackerOp({ bundler, version: v, entryPoint: entryPointOf(v), op, answer })).event;
}

describe("calculateGasLimits: Patron's answer is always valid on chain", () => {
  for (const v of VERSIONS) {
    test(`v${v}: a call using ~9,000,000 gas is refused (-32040), not answered above its signed cap`, async () => {
      const sender = await attacker();
      const op = await wireOp(sender, burnCallData(9_000_000n), {});
      const r = await call('pm_getPaymasterData', [op, entryPointOf(v), chainHex(), { calculateGasLimits: true }]);
      assert.equal(r.result, undefined, JSON.stringify(r));
      assert.equal(r.error?.code, -32040, JSON.stringify(r));
      assert.equal(r.error?.data?.rule, 'callGasLimit');
      assert.ok(BigInt(r.error?.data?.value ?? '0') > 10_000_000n);
    });

    test(`v${v}: a call using 700,000 gas is answered within the caps it is signed with, and executes`, async () => {
      const sender = await attacker();
      const op = await wireOp(sender, burnCallData(700_000n), {});
      const r = await call('pm_getPaymasterData', [op, entryPointOf(v), chainHex(), { calculateGasLimits: true }]);
      assert.ok(r.result, JSON.stringify(r));
      if (v !== '0.6') {
        const caps = capsOf(
          `${r.result.paymaster as Hex}${'0'.repeat(64)}${(r.result.paymasterData as Hex).slice(2)}` as Hex,
        );
        for (const k of ['callGasLimit', 'verificationGasLimit', 'preVerificationGas'] as const) {
          assert.ok(BigInt(String(r.result[k])) <= caps[k], `${k} ${r.result[k]} within its cap ${caps[k]}`);
        }
        // The call's cap is shrunk to the penalty bound (v0.7: 1,000,009), not twice the estimate.
        assert.ok(caps.callGasLimit <= 1_000_009n, `call cap ${caps.callGasLimit}`);
      }
      const event = await execute(v, op, r.result);
      assert.equal(event.success, true);
    });
  }

  test('v0.7+: an account burning all of its call gas in the simulation is refused too (the probe names the revert or the bound)', async () => {
    const sender = await attacker();
    const op = await wireOp(sender, BURN_ALL, {});
    const r = await call('pm_getPaymasterData', [op, entryPointOf('0.7'), chainHex(), { calculateGasLimits: true }]);
    assert.equal(r.result, undefined, JSON.stringify(r));
    assert.ok(r.error?.code === -32020 || r.error?.code === -32040, JSON.stringify(r));
  });
});
