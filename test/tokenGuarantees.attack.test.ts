import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, getAddress, type Hex, maxUint256, parseEventLogs, toHex } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevClient } from '../src/chain/devClient.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import type { EntryPointVersion } from '../src/chain/entryPoints.js';
import { COUNTER_ADDRESS, mintToken } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { rpcV2 } from './helpers/rpcV07.js';
import { createTenant, enableTokenGuarantees, type Tenant } from './helpers/testContext.js';
import {
  type AttackerAccount,
  approveCall,
  attackerAccount,
  attackerBundler,
  deployDrainer,
  runCall,
} from './helpers/tokenAttacker.js';
import {
  ATTACK_CALL_GAS,
  ATTACK_FEES,
  ATTACK_VERSIONS,
  type Limits,
  paymasterDeposit,
  requestTokenData,
  SIMULATION_TRIGGER,
  submitAttack,
} from './helpers/tokenAttackOps.js';
import { answer, type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The red team's finding of issue 31, played the attacker's way on every EntryPoint version: with the dApp's public
 * API key only, its own accounts, its own Drainer and its own bundler. A dApp that never chose to guarantee anything
 * (no policy, no webhook, token guarantees untouched: off) is asked for the token mode's mode 2 for an op that
 * batches its approval and defeats it in its own callData: refused at signing (-32021, `guaranteeOff`) in every
 * call that would sign it, with its own limits or Patron's, with or without an allowance of one unit on chain; the
 * deposit pays nothing. The same dApp still serves the token mode in mode 1 once the account approved the paymaster
 * itself. With guarantees on, a key its owner limited to `tokenQuotes` is refused (`guaranteeKeyFamily`) before the
 * dApp's webhook is asked; widened to `sponsorship`, the same key gets mode 2, executed on chain.
 */
let app: RpcFixture;
let usdc: DevTokenInfo;
/** A dApp that turned token guarantees on (the attacker's estimates of its mode-2 ops). */
let estimates: Tenant;
let hook: Receiver;
before(async () => {
  app = await startRpcFixture({ tokens: true });
  [usdc] = app.fx.tokens as [DevTokenInfo];
  estimates = await createTenant(app.ctx.deps);
  await enableTokenGuarantees(app.ctx.deps, estimates);
  hook = await startReceiver();
  hook.handler = answer({ arePoliciesVerified: true });
});
after(async () => {
  await hook?.close();
  await app?.close();
});

const USDC = 10n ** 6n;
const deposit = (version: EntryPointVersion) => paymasterDeposit(app, version);

/** The ERC-7677 stub in ERC20 mode for the op (v0.7+), as viem and permissionless ask it before estimating. */
async function stubFor(version: EntryPointVersion, tenant: Tenant, a: AttackerAccount, callData: Hex) {
  const op = {
    sender: a.sender,
    nonce: toHex(await a.account.getNonce()),
    callData,
    callGasLimit: '0x0',
    verificationGasLimit: '0x0',
    preVerificationGas: '0x0',
    maxFeePerGas: toHex(ATTACK_FEES.maxFeePerGas),
    maxPriorityFeePerGas: toHex(ATTACK_FEES.maxPriorityFeePerGas),
    signature: await a.account.getStubSignature(),
  };
  const params = [op, app.fx.entryPoints[version], toHex(app.fx.chain.chainId), { token: usdc.address }];
  return (await rpcV2(app, 'pm_getPaymasterStubData', params, tenant.apiKey)).body;
}

for (const version of ATTACK_VERSIONS) {
  describe(`EntryPoint v${version}: mode 2 only by the dApp's choice`, () => {
    let bundler: DevClient;
    let drainer: Address;
    const paymaster = () => app.fx.paymasters[version];
    const tokenData = (args: { tenant: Tenant; a: AttackerAccount; callData: Hex; limits?: Limits }) =>
      requestTokenData({ app, token: usdc.address, version, ...args });
    before(async () => {
      bundler = await attackerBundler(app.fx, `guarantees-${version}`);
      drainer = await deployDrainer(bundler, SIMULATION_TRIGGER[version]);
    });

    /** A fresh attacker account holding 1,000 USDC, its Drainer approved, the paymaster not (yet). */
    async function armedAccount(label: string) {
      const a = await attackerAccount({ fx: app.fx, version, label: `guarantees-${label}`, bundler });
      await mintToken(app.fx, usdc.address, a.sender, 1_000n * USDC);
      await a.ownTransaction(usdc.address, approveCall(drainer, maxUint256));
      return a;
    }
    /** The attack: the paymaster's approval batched, then the Drainer takes the tokens at inclusion. */
    const attackCallData = (a: AttackerAccount) =>
      a.account.encodeCalls([
        { to: usdc.address, data: approveCall(paymaster(), 10n ** 12n) },
        { to: drainer, data: runCall(usdc.address) },
      ]);
    const expectRefused = (
      r: { error?: { code: number; message: string; data?: unknown } | undefined },
      rule: 'guaranteeOff' | 'guaranteeKeyFamily',
      what: string,
    ) => {
      assert.equal(r.error?.code, -32021, `${what}: ${JSON.stringify(r)}`);
      assert.deepEqual(r.error?.data, { rule, paymaster: getAddress(paymaster()) }, what);
      assert.match(r.error?.message ?? '', /^This operation batches its USDC approval, so its charge is collected/);
      assert.match(r.error?.message ?? '', /approve the paymaster 0x[0-9a-fA-F]{40} for USDC before the operation/);
      assert.match(r.error?.message ?? '', /pay with a permit where the token supports it/);
    };

    test('the red team’s attack on a dApp with the default setting (no policy, no webhook): refused at signing in every call, the deposit pays nothing; mode 1 still served', async () => {
      const dapp = await createTenant(app.ctx.deps);
      const a = await armedAccount('default');
      const callData = await attackCallData(a);
      const depositBefore = await deposit(version);
      // The attacker's own limits (estimated where guarantees are on) with the call gas it means to burn.
      const estimate = await tokenData({ tenant: estimates, a, callData });
      assert.ok(estimate.limits, JSON.stringify(estimate.error));
      const own = await tokenData({
        tenant: dapp,
        a,
        callData,
        limits: { ...estimate.limits, callGasLimit: ATTACK_CALL_GAS },
      });
      expectRefused(own, 'guaranteeOff', 'its own limits');
      expectRefused(await tokenData({ tenant: dapp, a, callData }), 'guaranteeOff', 'Patron’s limits');
      if (version !== '0.6') expectRefused(await stubFor(version, dapp, a, callData), 'guaranteeOff', 'the stub');
      // One unit of allowance on chain first: no longer refused before the simulation, still refused after it.
      await a.ownTransaction(usdc.address, approveCall(paymaster(), 1n));
      expectRefused(await tokenData({ tenant: dapp, a, callData }), 'guaranteeOff', 'with one unit allowed');
      assert.equal(await deposit(version), depositBefore, 'nothing signed: the deposit paid nothing');

      // No approval batched, an allowance below the op's maximum (yet above what it is simulated to cost): signed as
      // the maximum, it would leave the deposit to pay what the op burns above it at inclusion. Refused by default;
      // a dApp that guarantees token ops signs it (mode 1, the allowance as the maximum).
      const drainOnly = await a.account.encodeCalls([{ to: drainer, data: runCall(usdc.address) }]);
      await a.ownTransaction(usdc.address, approveCall(paymaster(), 10n ** 12n));
      const drainEstimate = await tokenData({ tenant: estimates, a, callData: drainOnly });
      assert.ok(drainEstimate.limits, JSON.stringify(drainEstimate.error));
      const burn = { ...drainEstimate.limits, callGasLimit: ATTACK_CALL_GAS };
      const full = await tokenData({ tenant: estimates, a, callData: drainOnly, limits: burn });
      assert.ok(full.op, JSON.stringify(full.error));
      const half = full.fields.maxTokenCost / 2n;
      await a.ownTransaction(usdc.address, approveCall(paymaster(), half));
      const short = await tokenData({ tenant: dapp, a, callData: drainOnly, limits: burn });
      assert.equal(short.error?.code, -32021, JSON.stringify(short));
      assert.deepEqual(short.error?.data, {
        rule: 'guaranteeOff',
        paymaster: getAddress(paymaster()),
        allowance: half.toString(),
        maxTokenCost: full.fields.maxTokenCost.toString(),
      });
      assert.match(short.error?.message ?? '', /is below this operation's maximum charge .* token guarantees are off/);
      const covered = await tokenData({ tenant: estimates, a, callData: drainOnly, limits: burn });
      assert.ok(covered.op, JSON.stringify(covered.error));
      assert.deepEqual([covered.fields.guaranteed, covered.fields.maxTokenCost], [false, half]);
      assert.equal(await deposit(version), depositBefore, 'nothing of the default dApp’s signed');

      // The request log: every call of the default dApp so far a denial by its setting, none signed.
      await app.ctx.deps.requestLog.flush();
      const logged = await app.ctx.deps.store.requestLog.query({ accountId: dapp.accountId, limit: 100 });
      assert.ok(logged.length >= 4);
      for (const e of logged) assert.deepEqual([e.outcome, e.errorCode], ['denied', -32021]);

      // The account approves the paymaster itself: the same dApp signs the token mode's mode 1, prefunded.
      await a.ownTransaction(usdc.address, approveCall(paymaster(), 100n * USDC));
      const paying = await a.account.encodeCalls([
        { to: usdc.address, data: approveCall(paymaster(), 100n * USDC) },
        { to: COUNTER_ADDRESS, data: '0x01' },
      ]);
      const signed = await tokenData({ tenant: dapp, a, callData: paying });
      assert.ok(signed.op, JSON.stringify(signed.error));
      assert.equal(signed.fields.guaranteed, false, 'mode 1: the allowance given covers the maximum');
      const { receipt } = await submitAttack({ app, version, bundler, a, op: signed.op });
      const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
      const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs, eventName: 'TokenCharged' });
      assert.ok(event?.args.success === true && charged !== undefined && charged.args.charge > 0n, 'paid in USDC');
    });

    test('guarantees on: a key limited to tokenQuotes is refused before the webhook; widened to sponsorship, mode 2 executes on chain', async () => {
      const dapp = await createTenant(app.ctx.deps);
      await enableTokenGuarantees(app.ctx.deps, dapp);
      await app.ctx.deps.webhooks.create({ dappId: dapp.dappId, url: hook.url(`/${version}`), requestType: 'POST' });
      const restrict = (methods: string[]) =>
        app.ctx.deps.accounts.setDappRestrictions({
          accountId: dapp.accountId,
          dappId: dapp.dappId,
          restrictions: { methods },
        });
      await restrict(['tokenQuotes']);
      const asked = () => hook.requests.filter((r) => r.url === `/${version}`).length;
      const a = await armedAccount('key-family');
      const attack = await attackCallData(a);
      const depositBefore = await deposit(version);
      expectRefused(await tokenData({ tenant: dapp, a, callData: attack }), 'guaranteeKeyFamily', 'the attack');
      const benign = await a.account.encodeCalls([
        { to: usdc.address, data: approveCall(paymaster(), 100n * USDC) },
        { to: COUNTER_ADDRESS, data: '0x01' },
      ]);
      const refused = await tokenData({ tenant: dapp, a, callData: benign });
      expectRefused(refused, 'guaranteeKeyFamily', 'a benign first op');
      assert.match(refused.error?.message ?? '', /its method families exclude "sponsorship"/);
      if (version !== '0.6') expectRefused(await stubFor(version, dapp, a, benign), 'guaranteeKeyFamily', 'stub');
      assert.equal(asked(), 0, 'refused before the dApp’s webhook was asked');
      assert.equal(await deposit(version), depositBefore);

      await restrict(['tokenQuotes', 'sponsorship']);
      const signed = await tokenData({ tenant: dapp, a, callData: benign });
      assert.ok(signed.op, JSON.stringify(signed.error));
      assert.equal(signed.fields.guaranteed, true, 'mode 2');
      assert.equal(asked(), 1, 'a guarantee passes the dApp’s webhook');
      const { receipt } = await submitAttack({ app, version, bundler, a, op: signed.op });
      const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
      const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs, eventName: 'TokenCharged' });
      assert.ok(event?.args.success === true && charged !== undefined && charged.args.charge > 0n, 'charged');
    });
  });
}
