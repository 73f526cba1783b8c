import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, concat, encodeFunctionData, erc20Abi, getAddress, type Hex, keccak256, pad } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { MODE_TOKEN } from '../src/paymaster/entryPoints/paymasterModes.js';
import { decodePaymasterAndData } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { decodePaymasterAndDataV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { BURNER_CODE } from './helpers/attackerAccount.js';
import {
  buildDeployingOp,
  COUNTER_ADDRESS,
  mintToken,
  simpleAccountAbi,
  testKey,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, newSimpleAccountOp, rpcV2 } from './helpers/rpcV07.js';
import { createTenant, enableTokenGuarantees, type Tenant } from './helpers/testContext.js';

/**
 * The policy a token request names (`sponsorshipPolicyId`) in each dialect that can carry it: a mode-2 op (its
 * approval batched, so the dApp guarantees its charge) is checked against the named policy exactly as a sponsored op
 * would be (an unknown id is `policyNotFound`), whether it comes through the Biconomy dialect's mode object, the
 * ERC-7677 `{ token }` context or Pimlico's own pm_sponsorUserOperation context; the request log shows the signed
 * op as a guarantee with the named policy (docs/guides/token-mode.md, "Paying gas in ERC-20" and "Pimlico's ERC-20 dialect").
 * Each dApp here turned token guarantees on: without, mode 2 is refused before any policy (tokenGuarantees.attack.test.ts).
 */
let app: RpcFixture;
let usdc: DevTokenInfo;
before(async () => {
  app = await startRpcFixture({ tokens: true });
  [usdc] = app.fx.tokens as [DevTokenInfo];
});
after(() => app.close());

/** A dApp of its own that turned token guarantees on (off by default): mode 2 then goes through its policies. */
async function guaranteeingTenant(): Promise<Tenant> {
  const tenant = await createTenant(app.ctx.deps);
  await enableTokenGuarantees(app.ctx.deps, tenant);
  return tenant;
}

const zeroGas = { callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n };
const approve = (spender: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] });

describe('a sponsorshipPolicyId the request names applies to mode 2 in every dialect', () => {
  /** A dApp of its own with one policy that admits everything: naming another id must change the answer. */
  async function tenantWithPolicy() {
    const tenant = await guaranteeingTenant();
    const policy = await app.ctx.deps.policies.create({
      dappId: tenant.dappId,
      name: 'guarantees',
      rules: { caps: [{ scope: 'dapp', unit: 'wei', limit: (10n ** 18n).toString() }] },
    });
    return { tenant, policy };
  }

  async function logOf(tenant: Tenant) {
    await app.ctx.deps.requestLog.flush();
    const res = await app.ctx.app.inject({
      method: 'GET',
      url: '/api/admin/request-log',
      headers: { authorization: `Bearer ${tenant.authToken}` },
    });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: { entries: Array<{ outcome: string; policy: Record<string, unknown> | null }> } })
      .data.entries;
  }

  test('the Biconomy dialect (pm_sponsorUserOperation, v0.6): an unknown id is policyNotFound; the named policy reserves, logged as a guarantee', async () => {
    const { tenant, policy } = await tenantWithPolicy();
    const base = await buildDeployingOp(app.fx, 9_601n);
    await mintToken(app.fx, usdc.address, base.sender, 1_000_000_000n);
    const op = {
      ...base,
      callData: encodeFunctionData({
        abi: simpleAccountAbi,
        functionName: 'executeBatch',
        args: [
          [usdc.address, COUNTER_ADDRESS],
          [approve(app.fx.paymaster, 50_000_000n), '0x'],
        ],
      }),
    };
    const ask = (sponsorshipPolicyId: string) =>
      app.rpc(
        'pm_sponsorUserOperation',
        [
          biconomyWireOp(op),
          {
            mode: 'ERC20',
            calculateGasLimits: true,
            tokenInfo: { feeTokenAddress: usdc.address },
            sponsorshipPolicyId,
          },
        ],
        { apiKey: tenant.apiKey },
      );
    const unknown = await ask('no-such-policy');
    assert.equal(unknown.body.error?.code, -32012, JSON.stringify(unknown.body));
    assert.equal((unknown.body.error?.data as { rule?: string } | undefined)?.rule, 'policyNotFound');
    assert.match(unknown.body.error?.message ?? '', /batches its USDC approval/);

    const named = await ask(policy.id);
    assert.equal(named.status, 200, JSON.stringify(named.body));
    const signed = decodePaymasterAndData(String(named.body.result?.paymasterAndData) as Hex);
    assert.ok(signed.mode === MODE_TOKEN && signed.guaranteed === true, 'mode 2');
    const [entry, refused] = await logOf(tenant);
    assert.equal(entry?.outcome, 'sponsored');
    assert.equal(entry?.policy?.guarantee, true);
    assert.deepEqual(entry?.policy?.policyIds, [policy.id]);
    assert.equal((entry?.policy?.reserved as { unit: string }[] | undefined)?.[0]?.unit, 'wei');
    assert.deepEqual([refused?.outcome, refused?.policy?.rule], ['denied', 'policyNotFound']);
  });

  test('the { token } ERC-7677 context (pm_getPaymasterData, v0.7): the same', async () => {
    const { tenant, policy } = await tenantWithPolicy();
    const first = await newSimpleAccountOp(app.fx, '0.7', [{ to: COUNTER_ADDRESS, data: '0x01' }]);
    await mintToken(app.fx, usdc.address, first.op.sender, 1_000_000_000n);
    const callData = await first.account.encodeCalls([
      { to: usdc.address, data: approve(app.fx.paymasters['0.7'], 50_000_000n) },
      { to: COUNTER_ADDRESS, data: '0x01' },
    ]);
    const ask = async (sponsorshipPolicyId: string) => {
      const res = await app.ctx.app.inject({
        method: 'POST',
        url: `/api/v2/${app.fx.chain.chainId}/${tenant.apiKey}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'pm_getPaymasterData',
          params: [
            hexWire({ ...first.op, callData, ...zeroGas }),
            app.fx.entryPoints['0.7'],
            `0x${app.fx.chain.chainId.toString(16)}`,
            { token: usdc.address, calculateGasLimits: true, sponsorshipPolicyId },
          ],
        }),
      });
      return res.json() as {
        result?: Record<string, unknown>;
        error?: { code: number; message: string; data?: unknown };
      };
    };
    const unknown = await ask('no-such-policy');
    assert.equal(unknown.error?.code, -32012, JSON.stringify(unknown));
    assert.equal((unknown.error?.data as { rule?: string } | undefined)?.rule, 'policyNotFound');
    const named = await ask(policy.id);
    assert.ok(named.result, JSON.stringify(named));
    const data = concat([named.result.paymaster as Hex, pad('0x', { size: 32 }), named.result.paymasterData as Hex]);
    assert.equal(data.slice(2 + 104, 2 + 106), '02', 'mode byte 2');
    const [entry] = await logOf(tenant);
    assert.equal(entry?.policy?.guarantee, true);
    assert.deepEqual(entry?.policy?.policyIds, [policy.id]);
  });
});

describe('Pimlico’s pm_sponsorUserOperation with a { token } context', () => {
  test('is the token mode: mode 2 through the named policy (an unknown id is policyNotFound), never a sponsorship', async () => {
    const tenant = await guaranteeingTenant();
    const policy = await app.ctx.deps.policies.create({ dappId: tenant.dappId, name: 'guarantees', rules: {} });
    const first = await newSimpleAccountOp(app.fx, '0.7', [{ to: COUNTER_ADDRESS, data: '0x01' }]);
    await mintToken(app.fx, usdc.address, first.op.sender, 1_000_000_000n);
    const callData = await first.account.encodeCalls([
      { to: usdc.address, data: approve(app.fx.paymasters['0.7'], 50_000_000n) },
      { to: COUNTER_ADDRESS, data: '0x01' },
    ]);
    const ask = async (context: Record<string, unknown>) => {
      const res = await app.ctx.app.inject({
        method: 'POST',
        url: `/api/v2/${app.fx.chain.chainId}/${tenant.apiKey}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'pm_sponsorUserOperation',
          params: [hexWire({ ...first.op, callData }), app.fx.entryPoints['0.7'], context],
        }),
      });
      return res.json() as {
        result?: Record<string, unknown>;
        error?: { code: number; message: string; data?: unknown };
      };
    };
    const malformed = await ask({ token: 'usdc' });
    assert.equal(malformed.error?.code, -32602, JSON.stringify(malformed));
    assert.match(malformed.error?.message ?? '', /params\[2\]\.token/, 'a malformed token is named where it is');
    const unknown = await ask({ token: usdc.address, sponsorshipPolicyId: 'no-such-policy' });
    assert.equal(unknown.error?.code, -32012, JSON.stringify(unknown));
    assert.equal((unknown.error?.data as { rule?: string } | undefined)?.rule, 'policyNotFound');
    const named = await ask({ token: usdc.address, sponsorshipPolicyId: policy.id, validForSeconds: 120 });
    assert.ok(named.result, JSON.stringify(named));
    const r = named.result;
    for (const k of ['callGasLimit', 'verificationGasLimit', 'preVerificationGas', 'paymasterPostOpGasLimit']) {
      assert.match(String(r[k]), /^0x[0-9a-f]+$/, `${k} in hex, Pimlico's shape`);
    }
    const decoded = decodePaymasterAndDataV07(
      concat([r.paymaster as Hex, pad('0x', { size: 32 }), r.paymasterData as Hex]),
    );
    assert.ok(decoded.fields.mode === MODE_TOKEN && decoded.fields.guaranteed === true, 'mode 2, not sponsored');
    assert.equal(decoded.fields.token, getAddress(usdc.address));
    const now = Math.floor(Date.now() / 1000);
    assert.ok(decoded.validUntil <= now + 125 && decoded.validUntil >= now + 60, 'validForSeconds bounds the window');
  });
});

describe('a contract allowlist over a mode-2 op asks what the sender is', () => {
  test("the attacker's own code reading an approval batch is refused (unknownAccount); a real SimpleAccount's is mode 2", async () => {
    const tenant = await guaranteeingTenant();
    await app.ctx.deps.policies.create({
      dappId: tenant.dappId,
      name: 'approve USDC, count',
      rules: {
        contracts: [{ address: usdc.address, selectors: ['0x095ea7b3'] }, { address: COUNTER_ADDRESS }],
        sponsorDeployment: true,
      },
    });
    const ask = (op: Record<string, unknown>) =>
      rpcV2({ ...app, tenant }, 'pm_getPaymasterData', [
        hexWire(op),
        app.fx.entryPoints['0.7'],
        `0x${app.fx.chain.chainId.toString(16)}`,
        { token: usdc.address, calculateGasLimits: true },
      ]);
    const first = await newSimpleAccountOp(app.fx, '0.7', [{ to: COUNTER_ADDRESS, data: '0x01' }]);
    const callData = await first.account.encodeCalls([
      { to: usdc.address, data: approve(app.fx.paymasters['0.7'], 50_000_000n) },
      { to: COUNTER_ADDRESS, data: '0x01' },
    ]);

    // The same callData from an address holding code that validates anything and burns the gas of any call: the
    // allowlist would read SimpleAccount's executeBatch into two allowed calls, but the sender is no SimpleAccount.
    const burner = privateKeyToAccount(testKey('mode2-allowlist-burner')).address;
    await app.fx.client.setCode({ address: burner, bytecode: BURNER_CODE });
    await mintToken(app.fx, usdc.address, burner, 1_000_000_000n);
    const refused = await ask({
      sender: burner,
      nonce: 0n,
      callData,
      maxFeePerGas: first.op.maxFeePerGas,
      maxPriorityFeePerGas: first.op.maxPriorityFeePerGas,
      signature: '0x',
      ...zeroGas,
    });
    assert.equal(refused.body.error?.code, -32012, JSON.stringify(refused.body));
    const data = ((refused.body.error as { data?: unknown } | undefined)?.data ?? {}) as Record<string, unknown>;
    assert.equal(data.rule, 'unknownAccount');
    assert.equal(data.sender, getAddress(burner));
    assert.equal(data.codeHash, keccak256(BURNER_CODE));
    assert.match(refused.body.error?.message ?? '', /is not an account Patron knows/);
    assert.match(refused.body.error?.message ?? '', /batches its USDC approval/);

    await mintToken(app.fx, usdc.address, first.op.sender, 1_000_000_000n);
    const signed = await ask({ ...first.op, callData, ...zeroGas });
    assert.ok(signed.body.result, JSON.stringify(signed.body));
    const decoded = decodePaymasterAndDataV07(
      concat([signed.body.result.paymaster as Hex, pad('0x', { size: 32 }), signed.body.result.paymasterData as Hex]),
    );
    assert.ok(decoded.fields.mode === MODE_TOKEN && decoded.fields.guaranteed === true, 'mode 2');
  });
});
