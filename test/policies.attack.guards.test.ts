import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, type Hex, hexToBytes } from 'viem';
import type { SolvencySettings } from '../src/config/solvencySettings.js';
import {
  buildDeployingOp,
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  paymasterDeposit,
  startPatronFixture,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp } from './helpers/rpcFixture.js';
import { createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * Two attacks the red-team review found working, each asserting the defence that now holds: a huge batch against
 * a contract allowlist (seconds of one event loop per request, before decoding was bounded and the lists became
 * sets), and concurrent requests each passing the solvency check on the same figure (20 signed where 3 were
 * covered, before the check and the record became one step).
 */
let fx: PatronFixture;
let ctx: TestContext;
let tenant: Tenant;
let depositWei: bigint;
/** buildDeployingOp's worst case: (100,000 + 3 × 600,000 + 50,000) gas × 2 gwei. */
const WORST_CASE = 1_950_000n * 2_000_000_000n;

before(async () => {
  fx = await startPatronFixture();
  depositWei = await paymasterDeposit(fx);
  // A margin at which exactly 3 signatures can be issued one after the other (the 4th is held).
  const marginBps = (depositWei * 10_000n) / (2n * WORST_CASE);
  const solvency: SolvencySettings = {
    enabled: true,
    intervalMs: 3_600_000,
    trackedSignatures: 100_000,
    marginBps,
    floorWei: 0n,
    floorWeiByChain: new Map(),
    lowWaterWei: undefined,
    lowWaterWeiByChain: new Map(),
    alertHoldMs: 0,
    alert: undefined,
  };
  ctx = await createTestContext({
    chains: [fixtureChainRuntime(fx)],
    signerKey: hexToBytes(KEYS.signer),
    config: { solvency },
  });
  tenant = await createTenant(ctx.deps);
  await ctx.deps.solvency.checkNow();
});
after(async () => {
  await ctx.close();
  await fx.close();
});

const sponsorWire = (op: unknown, apiKey = tenant.apiKey, on: TestContext = ctx, calculateGasLimits = false) =>
  on.app.inject({
    method: 'POST',
    url: `/api/v1/${fx.chain.chainId}/${apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'pm_sponsorUserOperation',
      params: [op, { mode: 'SPONSORED', calculateGasLimits }],
    }),
  });

describe('a contract allowlist × a long batch: bounded work per request', () => {
  /** executeBatch(address[],bytes[]) of n calls to `target`, every bytes offset aliased to one empty bytes. */
  function aliasedBatch(n: number, target: Address): Hex {
    const w = (v: bigint) => v.toString(16).padStart(64, '0');
    const addrArrOff = 64n;
    const addrArr = w(BigInt(n)) + w(BigInt(target)).repeat(n);
    const bytesArrOff = addrArrOff + 32n * BigInt(n + 1);
    const bytesArr = w(BigInt(n)) + w(32n * BigInt(n)).repeat(n) + w(0n);
    return `0x18dfb3c7${w(addrArrOff)}${w(bytesArrOff)}${addrArr}${bytesArr}` as Hex;
  }

  test('3,900 calls to the last of 1,000 allowed contracts, or 65 small ones, are refused undecoded', async () => {
    const contracts = Array.from({ length: 1000 }, (_, i) => ({
      address: `0x${(0xc0de0000 + i).toString(16).padStart(40, '0')}`,
    }));
    const free = await createTestContext({ chains: [fixtureChainRuntime(fx)], signerKey: hexToBytes(KEYS.signer) });
    try {
      const dapp = await createTenant(free.deps);
      await free.deps.policies.create({ dappId: dapp.dappId, name: 'allowlist', rules: { contracts } });
      const op = await buildDeployingOp(fx, 900n);
      const last = contracts[999]?.address as Address;
      const wire = { ...biconomyWireOp(op), callData: aliasedBatch(3900, last) };
      assert.ok(JSON.stringify(wire).length < 512 * 1024, 'within the paymaster body limit');
      // The policy applies: the same batch to an unlisted contract is refused.
      const other = await sponsorWire(
        { ...wire, callData: aliasedBatch(2, '0x00000000000000000000000000000000000000aa') },
        dapp.apiKey,
        free,
      );
      assert.match(other.body, /contractNotAllowed/);
      // Too big to check: refused without being decoded (once it cost seconds of one event loop).
      const big = JSON.parse((await sponsorWire(wire, dapp.apiKey, free)).body);
      assert.equal(big.error?.data?.rule, 'undecodableCall');
      assert.match(big.error?.message, /callData of \d+ bytes, above the 32768 Patron decodes/);
      // Small enough to decode, but more calls than are checked.
      const many = JSON.parse(
        (await sponsorWire({ ...wire, callData: aliasedBatch(65, last) }, dapp.apiKey, free)).body,
      );
      assert.equal(many.error?.data?.rule, 'undecodableCall');
      assert.match(many.error?.message, /65 calls in one op, above the 64 Patron checks/);
      // 64 are checked, against the allowlist as a set.
      const fine = await sponsorWire({ ...wire, callData: aliasedBatch(64, last) }, dapp.apiKey, free);
      assert.equal(fine.statusCode, 200, fine.body);
    } finally {
      await free.close();
    }
  });
});

describe('the solvency guard under concurrent requests', () => {
  test('concurrent requests with calculateGasLimits: true are not signed past liabilities × margin', async () => {
    const ops = await Promise.all(Array.from({ length: 20 }, (_, i) => buildDeployingOp(fx, 500n + BigInt(i))));
    const answers = await Promise.all(
      ops.map((op) => sponsorWire(biconomyWireOp(op, false), tenant.apiKey, ctx, true)),
    );
    const signed = answers.filter((a) => a.statusCode === 200).map((a) => JSON.parse(a.body).result);
    const worst = signed.map(
      (r) =>
        (BigInt(r.callGasLimit) + 3n * BigInt(r.verificationGasLimit) + BigInt(r.preVerificationGas)) * 2_000_000_000n,
    );
    const total = worst.reduce((a, b) => a + b, 0n);
    // biome-ignore lint/complexity/useMathMinMax: Math.max does not take bigints
    const largest = worst.reduce((a, b) => (a > b ? a : b), 0n);
    const margin = ctx.deps.config.solvency.marginBps;
    // Each signature is admitted only while the liabilities before it × margin ≤ deposit: all but the last one
    // signed must fit.
    assert.ok(
      ((total - largest) * margin) / 10_000n <= depositWei,
      `${signed.length} of 20 signed; their worst cases ${total} wei × margin ${Number(margin) / 10_000} = ` +
        `${(total * margin) / 10_000n} wei against a deposit of ${depositWei} wei`,
    );
  });
});
