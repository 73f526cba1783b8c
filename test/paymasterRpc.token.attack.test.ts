import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, getAddress, type Hex, maxUint256, parseEventLogs } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevClient } from '../src/chain/devClient.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import type { EntryPointVersion } from '../src/chain/entryPoints.js';
import { mintToken, tokenBalance } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { createTenant, enableTokenGuarantees, type Tenant } from './helpers/testContext.js';
import {
  ARM_ONLY,
  type AttackerAccount,
  approveCall,
  attackerAccount,
  attackerBundler,
  deployDrainer,
  drainerAbi,
  runCall,
  transferCall,
} from './helpers/tokenAttacker.js';
import {
  ATTACK_CALL_GAS,
  ATTACK_VERSIONS,
  entryPointPrefund,
  failedOpReason,
  inToken,
  type Limits,
  paymasterDeposit,
  requestTokenData,
  SIMULATION_TRIGGER,
  submitAttack,
} from './helpers/tokenAttackOps.js';

/**
 * Issue 20, hole 1, played the attacker's way through Patron on every EntryPoint version: only the dApp's public API
 * key, its own accounts, its own contract and its own bundler (beneficiary of its own bundles, at a real gas price).
 * The account calls the attacker's Drainer, which does nothing while Patron simulates (gas price ≤ 1 gwei / 1000,
 * ≤ 100 wei on v0.9, not armed) and, at inclusion or once armed after signing, takes all the account's tokens and
 * burns its call gas (the issue's 8M, now the 900,000 the signing bounds admit). Mode 1 (the allowance in place): every op's charge is collected and covers what the
 * deposit paid, under a policy that denies all sponsorship. A plain transfer after signing: AA33, deposit
 * untouched. Mode 2 (the approval batched), for dApps that turned token guarantees on (off by default: refused
 * whatever the policies, tokenGuarantees.attack.test.ts): refused at signing under the deny-all policy; under the
 * guarantees' cap the deposit loses what the charge could not collect, never more than the cap the dApp set, and
 * settlement counts each loss against it.
 */
let app: RpcFixture;
let usdc: DevTokenInfo;
/** A dApp whose only policy is inactive, guarantees on: it sponsors nothing, so it guarantees nothing either. */
let denyAll: Tenant;
/** A dApp without policies, guarantees on (the attacker's gas estimates). */
let open: Tenant;
before(async () => {
  app = await startRpcFixture({ tokens: true });
  [usdc] = app.fx.tokens as [DevTokenInfo];
  denyAll = await createTenant(app.ctx.deps);
  await app.ctx.deps.policies.create({ dappId: denyAll.dappId, name: 'deny-all', active: false, rules: {} });
  open = await createTenant(app.ctx.deps);
  for (const t of [denyAll, open]) await enableTokenGuarantees(app.ctx.deps, t);
});
after(() => app.close());

const USDC = 10n ** 6n;
const deposit = (version: EntryPointVersion) => paymasterDeposit(app, version);
const balance = (who: Address) => tokenBalance(app.fx, usdc.address, who);
/** One fee receiver per paymaster, 0xfefe…fe06 to …fe09, so its balance change is that paymaster's charges. */
const feeReceiverOf = (version: EntryPointVersion) => getAddress(`0x${'fe'.repeat(19)}0${version.slice(2)}`);

for (const version of ATTACK_VERSIONS) {
  describe(`EntryPoint v${version}: the issue's token-mode attack through Patron`, () => {
    let bundler: DevClient;
    let drainer: Address;
    let armOnly: Address;
    const paymaster = () => app.fx.paymasters[version];
    const tokenData = (args: { tenant: Tenant; a: AttackerAccount; callData: Hex; limits?: Limits }) =>
      requestTokenData({ app, token: usdc.address, version, ...args });
    before(async () => {
      bundler = await attackerBundler(app.fx, `bundler-${version}`);
      drainer = await deployDrainer(bundler, SIMULATION_TRIGGER[version]);
      armOnly = await deployDrainer(bundler, ARM_ONLY);
      // A fee receiver of its own, so that its balance change is the charges alone.
      await app.fx.client.writeContract({
        address: paymaster(),
        abi: patronPaymasterAbi,
        functionName: 'setFeeReceiver',
        args: [feeReceiverOf(version)],
      });
    });

    /** A fresh attacker account holding `tokens`, the attacker's contracts approved (and the paymaster, `allowance`). */
    async function armedAccount(label: string, opts: { readonly allowance: boolean }) {
      const a = await attackerAccount({ fx: app.fx, version, label, bundler });
      await mintToken(app.fx, usdc.address, a.sender, 1_000n * USDC);
      await a.ownTransaction(usdc.address, approveCall(drainer, maxUint256));
      await a.ownTransaction(usdc.address, approveCall(armOnly, maxUint256));
      if (opts.allowance) await a.ownTransaction(usdc.address, approveCall(paymaster(), maxUint256));
      return a;
    }

    /** The attacker's estimate (Patron's limits for the call), then its own op: the same with ATTACK_CALL_GAS. */
    async function attackOp(tenant: Tenant, a: AttackerAccount, callData: Hex, estimateWith: Tenant = tenant) {
      const estimate = await tokenData({ tenant: estimateWith, a, callData });
      assert.ok(estimate.limits, JSON.stringify(estimate.error));
      return tokenData({ tenant, a, callData, limits: { ...estimate.limits, callGasLimit: ATTACK_CALL_GAS } });
    }

    test('mode 1, allowance in place, under a deny-all policy: 3 draining ops (gas-price trigger ×2, armed after signing), each charged in full, covering the deposit', async (t) => {
      const a = await armedAccount('mode1', { allowance: true });
      for (const [i, target] of [drainer, drainer, armOnly].entries()) {
        if (i > 0) await mintToken(app.fx, usdc.address, a.sender, 1_000n * USDC);
        const callData = await a.account.encodeCalls([{ to: target, data: runCall(usdc.address) }]);
        const signed = await attackOp(denyAll, a, callData);
        assert.ok(signed.op, `op ${i}: ${JSON.stringify(signed.error)}`);
        assert.equal(signed.fields.guaranteed, false, 'mode 1: the allowance covers the maximum');
        const max = signed.fields.maxTokenCost;
        // Armed by a transaction after Patron signed.
        if (target === armOnly) {
          await bundler.writeContract({ address: armOnly, abi: drainerAbi, functionName: 'arm', args: [a.sender] });
        }
        const held = await balance(a.sender);
        const [receiverBefore, sinkBefore, depositBefore] = [
          await balance(feeReceiverOf(version)),
          await balance(bundler.account.address),
          await deposit(version),
        ];
        const { receipt, gasPrice } = await submitAttack({ app, version, bundler, a, op: signed.op });
        assert.equal(receipt.status, 'success');
        assert.ok(gasPrice > SIMULATION_TRIGGER[version], 'included at a real gas price');
        const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
        assert.ok(event?.args.success, `op ${i}: the drain and the burn ran`);
        assert.ok(event.args.actualGasUsed > ATTACK_CALL_GAS - 60_000n, `op ${i}: the call gas was burnt`);
        // The account did move everything it held after the prefund to the attacker.
        assert.equal((await balance(bundler.account.address)) - sinkBefore, held - max, `op ${i}: drained`);
        const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs, eventName: 'TokenCharged' });
        assert.ok(charged !== undefined && charged.args.charge > 0n, `op ${i}: TokenCharged`);
        const charge = charged.args.charge;
        assert.equal((await balance(feeReceiverOf(version))) - receiverBefore, charge, `op ${i}: charge collected`);
        const spent = depositBefore - (await deposit(version));
        assert.equal(spent, event.args.actualGasCost, `op ${i}: the deposit paid actualGasCost`);
        assert.ok(
          charge >= inToken(spent, signed.fields),
          `op ${i}: charged ${charge} for ${inToken(spent, signed.fields)}`,
        );
        assert.equal(await balance(a.sender), max - charge, `op ${i}: the prefund's refund is all the account kept`);
        t.diagnostic(
          `v${version} op ${i}: deposit paid ${spent} wei (${inToken(spent, signed.fields)} USDC units), charged ${charge} of ${max}, drained ${held - max}`,
        );
      }
    });

    /** Mode 2's op: the approval of the paymaster batched before the attacker's approval and its Drainer call. */
    const mode2CallData = (a: AttackerAccount) =>
      a.account.encodeCalls([
        { to: usdc.address, data: approveCall(paymaster(), 10n ** 12n) },
        { to: usdc.address, data: approveCall(drainer, maxUint256) },
        { to: drainer, data: runCall(usdc.address) },
      ]);

    test('mode 2, the approval batched (no allowance in place): refused at signing under the deny-all policy', async () => {
      const a = await attackerAccount({ fx: app.fx, version, label: 'mode2-denied', bundler });
      await mintToken(app.fx, usdc.address, a.sender, 1_000n * USDC);
      const callData = await mode2CallData(a);
      const refused = await attackOp(denyAll, a, callData, open);
      assert.equal(refused.error?.code, -32012, JSON.stringify(refused));
      assert.match(refused.error?.message ?? '', /batches its USDC approval, so .* the dApp guarantees it/);
      assert.equal((refused.error?.data as { rule?: string } | undefined)?.rule, 'noPolicyApplies');
    });

    test('mode 2 under the guarantees’ cap: the attacker signs and submits until Patron refuses; the deposit loses at most the cap, which settlement charges with each loss', async (t) => {
      const cap = 7_500_000_000_000_000n; // 0.0075 ETH: two or three ops at the call gas the bounds admit
      const tenant = await createTenant(app.ctx.deps);
      const guaranteeCap = { limitWei: cap.toString(), resets: 'daily' } as const;
      await enableTokenGuarantees(app.ctx.deps, tenant, guaranteeCap);
      // v0.7+ repeats with one account (the failed charge reverts its execution, approval and drain included); v0.6
      // records the charge as unpaid and Patron refuses that account afterwards, so the attacker brings a new one.
      let a = await attackerAccount({ fx: app.fx, version, label: 'mode2-cap-0', bundler });
      await mintToken(app.fx, usdc.address, a.sender, 1_000n * USDC);
      const losses = new Map<string, bigint>();
      /** The most the EntryPoint can take from the deposit for each op: its prefund. */
      const prefunds = new Map<string, bigint>();
      let refusal: { code: number; message: string; data?: unknown } | undefined;
      for (let i = 0; i < 10 && refusal === undefined; i++) {
        if (version === '0.6' && i > 0) {
          const owing = await tokenData({ tenant, a, callData: await mode2CallData(a) });
          assert.equal(owing.error?.code, -32020, 'v0.6: the account that owes a charge is refused');
          assert.match(owing.error?.message ?? '', /settle any unpaid charge/);
          a = await attackerAccount({ fx: app.fx, version, label: `mode2-cap-${i}`, bundler });
          await mintToken(app.fx, usdc.address, a.sender, 1_000n * USDC);
        }
        const signed = await attackOp(tenant, a, await mode2CallData(a), open);
        if (signed.op === undefined) {
          refusal = signed.error;
          break;
        }
        assert.equal(signed.fields.guaranteed, true, 'mode 2');
        const [depositBefore, receiverBefore, held] = [
          await deposit(version),
          await balance(feeReceiverOf(version)),
          await balance(a.sender),
        ];
        const { receipt } = await submitAttack({ app, version, bundler, a, op: signed.op });
        assert.equal(receipt.status, 'success');
        const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
        assert.ok(event !== undefined, 'included');
        assert.equal(event.args.success, false, 'the charge failed: the execution was reverted');
        assert.deepEqual(
          parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs, eventName: 'TokenCharged' }),
          [],
        );
        assert.equal(await balance(feeReceiverOf(version)), receiverBefore, 'nothing collected');
        assert.equal(await balance(a.sender), held, 'the drain was undone with the execution');
        const lost = depositBefore - (await deposit(version));
        assert.equal(lost, event.args.actualGasCost);
        losses.set(event.args.userOpHash.toLowerCase(), lost);
        prefunds.set(event.args.userOpHash.toLowerCase(), entryPointPrefund(version, signed.op));
      }
      assert.ok(refusal !== undefined, 'Patron refused before the attacker gave up');
      assert.equal(refusal.code, -32021, JSON.stringify(refusal));
      const data = refusal.data as { rule?: string; limit?: string } | undefined;
      assert.equal(data?.rule, 'guaranteeCap');
      assert.equal(data?.limit, cap.toString());
      assert.match(refusal.message, /batches its USDC approval.*token-guarantee cap of 7500000000000000 wei \(daily/);
      assert.ok(losses.size >= 2, `${losses.size} ops signed under the cap`);
      const total = [...losses.values()].reduce((x, y) => x + y, 0n);
      t.diagnostic(`v${version}: ${losses.size} mode-2 ops, deposit lost ${total} wei of a ${cap} wei cap`);
      assert.ok(total <= cap, `lost ${total} > cap ${cap}`);
      // Each signed op reserved its worst case as a guarantee (the request log): at least the EntryPoint's prefund
      // for it, which bounds what it can cost.
      await app.ctx.deps.requestLog.flush();
      const entries = await app.ctx.deps.store.requestLog.query({ accountId: tenant.accountId, limit: 100 });
      const reserved = new Map(
        entries
          .filter((e) => e.outcome === 'sponsored')
          .map((e) => {
            assert.equal(e.policy?.guarantee, true);
            const [w] = e.policy?.reserved ?? [];
            assert.equal(w?.unit, 'wei');
            return [String(e.userOpHash), BigInt(w?.amount ?? '0')] as const;
          }),
      );
      assert.deepEqual([...reserved.keys()].sort(), [...losses.keys()].sort(), 'one reservation per signed op');
      for (const [hash, lost] of losses) {
        const w = reserved.get(hash) ?? 0n;
        assert.ok(w >= (prefunds.get(hash) ?? w + 1n), `op ${hash}: reserved ${w} below the EntryPoint's prefund`);
        assert.ok(lost <= w, `op ${hash}: lost ${lost} > reserved ${w}`);
      }
      const usage = await app.ctx.deps.policies.guaranteeUsage(tenant.dappId, guaranteeCap);
      const sum = [...reserved.values()].reduce((x, y) => x + y, 0n);
      assert.equal(BigInt(usage.reservedWei) + BigInt(usage.usedWei), sum, 'the ledger holds them all');
      assert.ok(sum <= cap);
      // Settlement reads each op's UserOperationEvent and no TokenCharged: each guarantee is charged at its cost.
      await app.ctx.deps.settlement.runOnce();
      const settled = await app.ctx.deps.policies.guaranteeUsage(tenant.dappId, guaranteeCap);
      assert.deepEqual([settled.usedWei, settled.reservedWei], [total.toString(), '0'], 'the cap holds what was lost');
    });

    test('mode 1: the tokens moved away by a plain transfer after signing end in AA33, the deposit untouched', async () => {
      const a = await armedAccount('transfer', { allowance: true });
      const callData = await a.account.encodeCalls([{ to: drainer, data: runCall(usdc.address) }]);
      const signed = await attackOp(denyAll, a, callData);
      assert.ok(signed.op, JSON.stringify(signed.error));
      assert.equal(signed.fields.guaranteed, false);
      await a.ownTransaction(usdc.address, transferCall(bundler.account.address, await balance(a.sender)));
      assert.match(await failedOpReason({ app, version, bundler, a, op: signed.op }), /^AA33 /);
      const [depositBefore, receiverBefore] = [await deposit(version), await balance(feeReceiverOf(version))];
      const { receipt } = await submitAttack({ app, version, bundler, a, op: signed.op });
      assert.equal(receipt.status, 'reverted', 'handleOps reverts: FailedOp AA33');
      assert.equal(await deposit(version), depositBefore, 'the deposit paid nothing');
      assert.equal(await balance(feeReceiverOf(version)), receiverBefore);
    });
  });
}
