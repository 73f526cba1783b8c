import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Address,
  bytesToHex,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  type Hex,
  maxUint256,
  numberToHex,
  pad,
  parseAbi,
  parseAbiParameters,
  parseEventLogs,
  size,
  slice,
} from 'viem';
import { entryPoint09Abi } from 'viem/account-abstraction';
import { devTokenAbi } from '../src/chain/artifacts.js';
import { patronPaymasterV07Abi } from '../src/chain/deployPatronPaymasterV07.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { viemKeccak } from '../src/paymaster/entryPoints/abiWords.js';
import {
  maxPenaltyGas,
  maxTokenCostV07,
  POST_OP_OVERHEAD_V07,
  tokenChargeV07,
  worstCaseCostV07,
} from '../src/paymaster/entryPoints/v07/chargesV07.js';
import { FEE_RECEIVER_SLOT } from '../src/paymaster/entryPoints/v07/entryPointV07.js';
import { tokenHashV07 } from '../src/paymaster/entryPoints/v07/hashesV07.js';
import {
  decodePaymasterAndDataV07,
  encodePaymasterAndDataV07,
  exactCapsV07,
  type GasCapsV07,
} from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { COUNTER_ADDRESS } from './helpers/patronPaymasterV06.js';
import {
  AA32,
  AA33,
  AA34,
  batchCallData,
  buildDeployingOp,
  counterValue,
  failedOpReason,
  handleOne,
  latestTimestamp,
  mintToken,
  type OpV07,
  opGasPrice,
  packed,
  paymasterDeposit,
  setFeeReceiver,
  signAccount,
  signedGasOf,
  signPaymaster,
  simulateOp,
  submitHandleOps,
  tokenBalance,
  useV07Chain,
  VERSIONS,
  validateAsEntryPoint,
} from './helpers/patronPaymasterV07.js';

/** 3000 USD per ETH, 1 USD per token, 6 decimals: 3000e6 base units per 1e18 wei. */
const RATE_USDC = 3000n * 10n ** 6n;
const MARKUP_10_PERCENT = 1_100_000;
const price = { exchangeRate: RATE_USDC, priceMarkup: MARKUP_10_PERCENT };
/** Generous enough for the first op's approval + counter call and for postOp's transfer to a new receiver. */
const CALL_GAS = 150_000n;
const POST_OP_GAS = 100_000n;
/** The token context: sender, token, exchangeRate, priceMarkup, maxTokenCost, penalty bound, prefunded. */
const CONTEXT = parseAbiParameters('address, address, uint128, uint32, uint128, uint256, bool');

for (const version of VERSIONS) {
  describe(`PatronPaymasterV07 on EntryPoint v${version} (token mode)`, () => {
    let usdc: DevTokenInfo;
    let other: DevTokenInfo;
    const feeReceiver: Address = getAddress('0x00000000000000000000000000000000fee0fee0');
    const chain = useV07Chain(version, {
      async setUp(fx) {
        [usdc, other] = fx.tokens as [DevTokenInfo, DevTokenInfo];
        await setFeeReceiver(fx, feeReceiver);
      },
    });

    const mint = (token: Address, to: Address, amount: bigint) => mintToken(chain.fx, token, to, amount);
    const balanceOf = (token: Address, who: Address) => tokenBalance(chain.fx, token, who);
    const approveCall = (amount: bigint) =>
      encodeFunctionData({ abi: devTokenAbi, functionName: 'approve', args: [chain.fx.paymaster, amount] });
    /** The approval first, then the user's call (the counter), batched as SDKs do. */
    const batchWithApproval = (token: Address, amount: bigint) =>
      batchCallData(version, [
        { target: token, data: approveCall(amount) },
        { target: COUNTER_ADDRESS, data: '0x' },
      ]);

    interface TokenOpOptions {
      readonly approve?: { token: Address; amount: bigint } | null;
      readonly maxTokenCost?: bigint;
      readonly token?: Address;
      readonly priceMarkup?: number;
      readonly overrides?: Partial<OpV07>;
      readonly mutate?: (op: OpV07) => OpV07;
      /** Mode 2; default: when the approval is batched in callData (mode 1 cannot use it). */
      readonly guaranteed?: boolean;
    }

    /** A deploying SimpleAccount op paying in USDC, signed by the paymaster and the account. */
    async function tokenOp(o: TokenOpOptions = {}) {
      const base = await buildDeployingOp(chain.fx, {
        callGasLimit: CALL_GAS,
        paymasterPostOpGasLimit: POST_OP_GAS,
        ...o.overrides,
      });
      const opPrice = { ...price, priceMarkup: o.priceMarkup ?? price.priceMarkup };
      const cap = o.maxTokenCost ?? maxTokenCostV07(signedGasOf(base), base.maxFeePerGas, price, version);
      const approve = o.approve === undefined ? { token: usdc.address, amount: cap } : o.approve;
      const op: OpV07 = {
        ...base,
        callData: approve === null ? base.callData : batchWithApproval(approve.token, approve.amount),
      };
      const guaranteed = o.guaranteed ?? approve !== null;
      const token = { token: o.token ?? usdc.address, ...opPrice, maxTokenCost: cap, guaranteed };
      const signed = await signPaymaster(chain.fx, op, { ...chain.window, token });
      return { op: await signAccount(chain.fx, (o.mutate ?? ((x) => x))(signed)), cap };
    }

    const chargedEvents = (logs: Parameters<typeof parseEventLogs>[0]['logs']) =>
      parseEventLogs({ abi: patronPaymasterV07Abi, eventName: 'TokenCharged', logs });

    it('computes the same hash as getTokenHash, and shares POST_OP_OVERHEAD and maxPenaltyGas with the service', async () => {
      const userOp = await buildDeployingOp(chain.fx, { paymasterPostOpGasLimit: POST_OP_GAS });
      const fields = {
        validUntil: 2 ** 48 - 1,
        validAfter: 1_700_000_000,
        token: usdc.address,
        exchangeRate: (1n << 128n) - 1n,
        priceMarkup: 2_000_000,
        maxTokenCost: 123_456_789n,
      };
      const withLimits = await signPaymaster(chain.fx, userOp, { ...chain.window, token: fields });
      const capsCases: GasCapsV07[] = [
        exactCapsV07(userOp),
        { maxVerificationGasLimit: (1n << 64n) - 1n, maxCallGasLimit: 0n, maxPreVerificationGas: 123_456n },
      ];
      const hashes = new Set<string>();
      for (const [caps, mode] of capsCases.flatMap((c) => [[c, 1] as const, [c, 2] as const])) {
        const onChain = await chain.fx.client.readContract({
          address: chain.fx.paymaster,
          abi: patronPaymasterV07Abi,
          functionName: 'getTokenHash',
          args: [
            packed(withLimits),
            mode,
            fields.validUntil,
            fields.validAfter,
            caps.maxVerificationGasLimit,
            caps.maxCallGasLimit,
            caps.maxPreVerificationGas,
            fields.token,
            fields.exchangeRate,
            fields.priceMarkup,
            fields.maxTokenCost,
          ],
        });
        const local = tokenHashV07(
          {
            userOp,
            chainId: BigInt(chain.fx.chainId),
            paymaster: chain.fx.paymaster,
            entryPoint: chain.fx.entryPoint,
            ...fields,
            guaranteed: mode === 2,
            caps,
          },
          viemKeccak,
        );
        assert.equal(bytesToHex(local), onChain, `caps ${caps.maxVerificationGasLimit}, mode ${mode}`);
        hashes.add(onChain);
      }
      assert.equal(hashes.size, 4, 'the mode byte is in the hash');
      const read = (functionName: 'POST_OP_OVERHEAD') =>
        chain.fx.client.readContract({ address: chain.fx.paymaster, abi: patronPaymasterV07Abi, functionName });
      assert.equal(await read('POST_OP_OVERHEAD'), POST_OP_OVERHEAD_V07);
      for (const [callGasLimit, postOp] of [
        [0n, 0n],
        [100_000n, 40_000n],
        [100_000n, 40_001n],
        [1_000_000n, 70_000n],
        [(1n << 128n) - 1n, (1n << 128n) - 1n],
      ] as const) {
        const onChainPenalty = await chain.fx.client.readContract({
          address: chain.fx.paymaster,
          abi: patronPaymasterV07Abi,
          functionName: 'maxPenaltyGas',
          args: [callGasLimit, postOp],
        });
        assert.equal(onChainPenalty, maxPenaltyGas({ callGasLimit, paymasterPostOpGasLimit: postOp, version }));
      }
    });

    it('mode 2: charges the formula to the fee receiver in postOp (approval batched in callData), within the cap, covering the gas', async (t) => {
      const { op, cap } = await tokenOp();
      await mint(usdc.address, op.sender, 1_000n * 10n ** 6n);
      const depositBefore = await paymasterDeposit(chain.fx);
      const { receipt, event, baseFee } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true);
      const [charged, ...more] = chargedEvents(receipt.logs);
      assert.ok(charged !== undefined && more.length === 0, 'one TokenCharged');
      const fee = opGasPrice(op, baseFee);
      const penalty = maxPenaltyGas({ ...op, version });
      const expected = tokenChargeV07({
        actualGasCost: charged.args.actualGasCost,
        actualUserOpFeePerGas: fee,
        maxPenaltyGas: penalty,
        price,
        maxTokenCost: cap,
      });
      assert.equal(charged.args.charge, expected);
      assert.ok(expected < cap, 'below the signed maximum (so the formula, not the cap, set it)');
      assert.equal(await balanceOf(usdc.address, feeReceiver), expected);
      assert.equal(await balanceOf(usdc.address, op.sender), 1_000n * 10n ** 6n - expected);
      const spent = depositBefore - (await paymasterDeposit(chain.fx));
      assert.equal(spent, event.args.actualGasCost, 'the deposit paid exactly actualGasCost');
      // The charge in wei, before conversion, covers what the deposit paid: postOp's own gas, the EntryPoint's
      // accounting after it and every penalty fit within POST_OP_OVERHEAD + maxPenaltyGas.
      const chargedWei = charged.args.actualGasCost + (POST_OP_OVERHEAD_V07 + penalty) * fee;
      assert.ok(chargedWei >= spent, `charged ${chargedWei} wei for ${spent} spent`);
      assert.equal(await counterValue(chain.fx), 1n);
      // The gas from postOp's start to the end of the op's accounting; penalties aside (see the next test).
      const afterPostOp = event.args.actualGasUsed - charged.args.actualGasCost / fee;
      t.diagnostic(
        `v${version}: charged ${expected} of cap ${cap}; gas after postOp's actualGasCost: ${afterPostOp} (penalty bound ${penalty})`,
      );
    });

    it('charges no more than POST_OP_OVERHEAD above the gas paid, even with a large unused callGasLimit', async (t) => {
      // 1M callGasLimit, ~60k of it used: the execution penalty (~94k gas) is large. v0.7 charges it after
      // postOp; v0.8+ already counts it in postOp's actualGasCost, so charging it again would overcharge.
      // postOpGasLimit 60k leaves under 40k unused on v0.8+: no postOp penalty there, so the bound is exact.
      const { op } = await tokenOp({ overrides: { callGasLimit: 1_000_000n, paymasterPostOpGasLimit: 60_000n } });
      await mint(usdc.address, op.sender, 1_000n * 10n ** 6n);
      const depositBefore = await paymasterDeposit(chain.fx);
      const { receipt, event, baseFee } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true);
      const [charged] = chargedEvents(receipt.logs);
      assert.ok(charged !== undefined);
      const fee = opGasPrice(op, baseFee);
      const penalty = maxPenaltyGas({ ...op, version });
      const spentGas = (depositBefore - (await paymasterDeposit(chain.fx))) / fee;
      const chargedGas = charged.args.actualGasCost / fee + POST_OP_OVERHEAD_V07 + penalty;
      assert.ok(chargedGas >= spentGas, `charged ${chargedGas} gas for ${spentGas}`);
      assert.ok(
        chargedGas - spentGas <= POST_OP_OVERHEAD_V07,
        `charged ${chargedGas - spentGas} gas more than paid (penalty bound ${penalty})`,
      );
      const overhead = spentGas - charged.args.actualGasCost / fee;
      t.diagnostic(
        `v${version}: paid ${spentGas} gas, charged ${chargedGas}; gas after postOp's actualGasCost ${overhead} incl. penalties`,
      );
    });

    it('accepts an allowance already in place (no approval in callData)', async () => {
      const first = await tokenOp({ approve: { token: usdc.address, amount: maxUint256 } });
      await mint(usdc.address, first.op.sender, 1_000n * 10n ** 6n);
      assert.equal((await handleOne(chain.fx, first.op)).event.args.success, true);
      // The account now exists: a plain call, no initCode.
      const second = await buildDeployingOp(chain.fx, {
        initCode: '0x',
        verificationGasLimit: 100_000n,
        paymasterPostOpGasLimit: POST_OP_GAS,
      });
      const cap = maxTokenCostV07(signedGasOf(second), second.maxFeePerGas, price, version);
      const signed = await signPaymaster(chain.fx, second, {
        ...chain.window,
        token: { token: usdc.address, ...price, maxTokenCost: cap },
      });
      const { receipt, event } = await handleOne(chain.fx, await signAccount(chain.fx, signed));
      assert.equal(event.args.success, true);
      assert.equal(chargedEvents(receipt.logs).length, 1);
    });

    /** Deploys the account with a first op (mode 2) that approves the paymaster for everything, and funds it. */
    async function accountWithAllowance(funds = 1_000n * 10n ** 6n) {
      const first = await tokenOp({ approve: { token: usdc.address, amount: maxUint256 } });
      await mint(usdc.address, first.op.sender, funds);
      assert.equal((await handleOne(chain.fx, first.op)).event.args.success, true);
      return first.op.sender;
    }

    /** A mode-1 op of the deployed account (no initCode, no approval), signed at its own limits. */
    async function prefundedOp(overrides: Partial<OpV07> = {}, maxTokenCost?: bigint) {
      const base = await buildDeployingOp(chain.fx, {
        initCode: '0x',
        verificationGasLimit: 100_000n,
        callGasLimit: CALL_GAS,
        paymasterPostOpGasLimit: POST_OP_GAS,
        ...overrides,
      });
      const cap = maxTokenCost ?? maxTokenCostV07(signedGasOf(base), base.maxFeePerGas, price, version);
      const token = { token: usdc.address, ...price, maxTokenCost: cap };
      const signed = await signPaymaster(chain.fx, base, { ...chain.window, token });
      return { op: await signAccount(chain.fx, signed), cap };
    }

    const transfers = (logs: Parameters<typeof parseEventLogs>[0]['logs']) =>
      parseEventLogs({ abi: devTokenAbi, eventName: 'Transfer', logs })
        .filter((l) => getAddress(l.address) === getAddress(usdc.address))
        .map((l) => [l.args.from, l.args.to, l.args.value] as const);

    it('mode 1: takes the maximum in validation, refunds the rest and pays the charge in postOp', async (t) => {
      const sender = await accountWithAllowance();
      const { op, cap } = await prefundedOp();
      const context = await validateAsEntryPoint(chain.fx, op);
      assert.ok(context.ok);
      assert.equal(
        context.context,
        encodeAbiParameters(CONTEXT, [
          sender,
          usdc.address,
          price.exchangeRate,
          price.priceMarkup,
          cap,
          maxPenaltyGas({ ...op, version }),
          true,
        ]),
      );
      const before = await balanceOf(usdc.address, sender);
      const receiverBefore = await balanceOf(usdc.address, feeReceiver);
      const depositBefore = await paymasterDeposit(chain.fx);
      const { receipt, event, baseFee } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true);
      const [charged] = chargedEvents(receipt.logs);
      assert.ok(charged !== undefined);
      const fee = opGasPrice(op, baseFee);
      const penalty = maxPenaltyGas({ ...op, version });
      const charge = tokenChargeV07({
        actualGasCost: charged.args.actualGasCost,
        actualUserOpFeePerGas: fee,
        maxPenaltyGas: penalty,
        price,
        maxTokenCost: cap,
      });
      assert.equal(charged.args.charge, charge);
      assert.ok(charge < cap);
      const pm = getAddress(chain.fx.paymaster);
      assert.deepEqual(transfers(receipt.logs), [
        [sender, pm, cap],
        [pm, sender, cap - charge],
        [pm, feeReceiver, charge],
      ]);
      assert.equal(await balanceOf(usdc.address, sender), before - charge);
      assert.equal((await balanceOf(usdc.address, feeReceiver)) - receiverBefore, charge);
      assert.equal(await balanceOf(usdc.address, chain.fx.paymaster), 0n, 'the paymaster keeps nothing');
      const spent = depositBefore - (await paymasterDeposit(chain.fx));
      const chargedWei = charged.args.actualGasCost + (POST_OP_OVERHEAD_V07 + penalty) * fee;
      assert.ok(chargedWei >= spent, `charged ${chargedWei} wei for ${spent} spent`);
      t.diagnostic(
        `v${version} mode 1: gas after postOp's actualGasCost ${event.args.actualGasUsed - charged.args.actualGasCost / fee}, charged ${chargedWei - spent} wei above the deposit's spend`,
      );
    });

    it('mode 1: charges no more than POST_OP_OVERHEAD above the gas paid, even with a large unused callGasLimit', async (t) => {
      await accountWithAllowance();
      await setFeeReceiver(chain.fx, getAddress('0x00000000000000000000000000000000fee0fee1'));
      const { op } = await prefundedOp({ callGasLimit: 1_000_000n, paymasterPostOpGasLimit: 60_000n });
      const depositBefore = await paymasterDeposit(chain.fx);
      const { receipt, event, baseFee } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true);
      const [charged] = chargedEvents(receipt.logs);
      assert.ok(charged !== undefined);
      const fee = opGasPrice(op, baseFee);
      const spentGas = (depositBefore - (await paymasterDeposit(chain.fx))) / fee;
      const chargedGas = charged.args.actualGasCost / fee + POST_OP_OVERHEAD_V07 + maxPenaltyGas({ ...op, version });
      assert.ok(chargedGas >= spentGas, `charged ${chargedGas} gas for ${spentGas}`);
      assert.ok(chargedGas - spentGas <= POST_OP_OVERHEAD_V07, `charged ${chargedGas - spentGas} gas more than paid`);
      t.diagnostic(
        `v${version} mode 1: paid ${spentGas} gas, charged ${chargedGas}; gas after postOp's actualGasCost ${spentGas - charged.args.actualGasCost / fee} incl. penalties (empty fee receiver)`,
      );
    });

    it(`mode 1: refuses at validation an account without an allowance, or whose balance is short (${AA33}), even with an approval in callData`, async () => {
      const { op, cap } = await tokenOp({ guaranteed: false });
      await mint(usdc.address, op.sender, 10n ** 12n);
      assert.deepEqual(await simulateOp(chain.fx, op), {
        reason: AA33,
        inner: { errorName: 'TokenAllowanceTooLow', args: [usdc.address, 0n, cap] },
      });
      const sender = await accountWithAllowance();
      const balance = await balanceOf(usdc.address, sender);
      const prefunding = await prefundedOp({}, balance + 1n);
      assert.deepEqual(await simulateOp(chain.fx, prefunding.op), {
        reason: AA33,
        inner: { errorName: 'TokenBalanceTooLow', args: [usdc.address, balance, balance + 1n] },
      });
    });

    it('attack: a mode-1 account that moves its tokens away during execution (attacker bundler) still pays the full charge', async () => {
      const funds = 1_000n * 10n ** 6n;
      const sender = await accountWithAllowance(funds);
      const attacker = getAddress('0x00000000000000000000000000000000a77ac4e7');
      // The signed op sends everything the account holds after validation to the attacker, and leaves 1M call gas
      // unused: what postOp's transferFrom used to find missing.
      const held = await balanceOf(usdc.address, sender);
      const probe = await prefundedOp({ callGasLimit: 1_000_000n });
      const drain = batchCallData(version, [
        {
          target: usdc.address,
          data: encodeFunctionData({ abi: devTokenAbi, functionName: 'transfer', args: [attacker, held - probe.cap] }),
        },
      ]);
      const { op, cap } = await prefundedOp({ callGasLimit: 1_000_000n, callData: drain });
      assert.equal(cap, probe.cap);
      const receiverBefore = await balanceOf(usdc.address, feeReceiver);
      const depositBefore = await paymasterDeposit(chain.fx);
      // submitHandleOps: the bundler EOA calls handleOps with itself as beneficiary.
      const { receipt, event } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true);
      assert.equal(await balanceOf(usdc.address, attacker), held - cap, 'the account did move its tokens');
      const [charged] = chargedEvents(receipt.logs);
      assert.ok(charged !== undefined && charged.args.charge > 0n);
      const received = (await balanceOf(usdc.address, feeReceiver)) - receiverBefore;
      assert.equal(received, charged.args.charge, 'the fee receiver got the whole charge');
      const spent = depositBefore - (await paymasterDeposit(chain.fx));
      // What the deposit spent, in USDC at the signed price, is covered by what was received.
      const spentInToken = (spent * price.exchangeRate * BigInt(price.priceMarkup) + 10n ** 24n - 1n) / 10n ** 24n;
      assert.ok(received >= spentInToken, `received ${received} for ${spentInToken} spent`);
    });

    it(`attack: tokens moved away after signing, before inclusion: refused in validation (${AA33}), the deposit pays nothing`, async () => {
      const sender = await accountWithAllowance();
      const { op, cap } = await prefundedOp();
      // The account's owner moves the tokens in a transaction of its own after Patron signed.
      await chain.fx.client.impersonateAccount({ address: sender });
      await chain.fx.client.setBalance({ address: sender, value: 10n ** 18n });
      const held = await balanceOf(usdc.address, sender);
      await waitForSuccess(
        chain.fx.client,
        await chain.fx.client.writeContract({
          account: sender,
          address: usdc.address,
          abi: devTokenAbi,
          functionName: 'transfer',
          args: [feeReceiver, held],
        }),
        'move the tokens',
      );
      assert.deepEqual(await simulateOp(chain.fx, op), {
        reason: AA33,
        inner: { errorName: 'TokenBalanceTooLow', args: [usdc.address, 0n, cap] },
      });
      const depositBefore = await paymasterDeposit(chain.fx);
      const { receipt } = await submitHandleOps(chain.fx, [op]).catch(() => ({ receipt: undefined }));
      assert.ok(receipt === undefined || receipt.status === 'reverted', 'handleOps reverts (FailedOp AA33)');
      assert.equal(await paymasterDeposit(chain.fx), depositBefore);
    });

    it('mode 2 with the allowance already in place prefunds like mode 1', async () => {
      const sender = await accountWithAllowance();
      const base = await buildDeployingOp(chain.fx, {
        initCode: '0x',
        verificationGasLimit: 100_000n,
        paymasterPostOpGasLimit: POST_OP_GAS,
      });
      const cap = maxTokenCostV07(signedGasOf(base), base.maxFeePerGas, price, version);
      const token = { token: usdc.address, ...price, maxTokenCost: cap, guaranteed: true };
      const op = await signAccount(chain.fx, await signPaymaster(chain.fx, base, { ...chain.window, token }));
      const { receipt, event } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true);
      const [first] = transfers(receipt.logs);
      assert.deepEqual(first, [sender, getAddress(chain.fx.paymaster), cap]);
    });

    it('mode 1: postOp never reverts once prefunded; what cannot move stays with the paymaster, which the owner withdraws', async () => {
      const sender = await accountWithAllowance();
      const { op, cap } = await prefundedOp();
      const before = await balanceOf(usdc.address, sender);
      // The fee receiver slot set to address(0): OpenZeppelin's ERC-20 refuses transfers to it.
      await chain.fx.client.setStorageAt({ address: chain.fx.paymaster, index: FEE_RECEIVER_SLOT, value: pad('0x00') });
      const { receipt, event } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true, 'the op is not reverted');
      const [charged] = chargedEvents(receipt.logs);
      assert.ok(charged !== undefined);
      assert.equal(await balanceOf(usdc.address, chain.fx.paymaster), charged.args.charge, 'the charge stays');
      assert.equal(await balanceOf(usdc.address, sender), before - charged.args.charge, 'the refund went through');
      // postOp called directly by the EntryPoint with a prefunded context the paymaster does not hold: neither the
      // refund nor the payment can move, and it still returns (the maximum counts as charged).
      const context = encodeAbiParameters(CONTEXT, [
        sender,
        usdc.address,
        price.exchangeRate,
        price.priceMarkup,
        cap,
        0n,
        true,
      ]);
      const { result } = await chain.fx.client.simulateContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterV07Abi,
        functionName: 'postOp',
        args: [0, context, 1n, 1n],
        account: chain.fx.entryPoint,
      });
      assert.equal(result, undefined);
      const to = getAddress('0x00000000000000000000000000000000000b0b0b');
      await waitForSuccess(
        chain.fx.client,
        await chain.fx.client.writeContract({
          address: chain.fx.paymaster,
          abi: patronPaymasterV07Abi,
          functionName: 'withdrawTokens',
          args: [usdc.address, to, charged.args.charge],
        }),
        'withdrawTokens',
      );
      assert.equal(await balanceOf(usdc.address, to), charged.args.charge);
      await assert.rejects(
        chain.fx.stranger.writeContract({
          address: chain.fx.paymaster,
          abi: patronPaymasterV07Abi,
          functionName: 'withdrawTokens',
          args: [usdc.address, to, 0n],
        }),
        /OwnableUnauthorizedAccount/,
      );
    });

    it(`refuses at validation an account whose balance is below the maximum charge (${AA33})`, async () => {
      const { op, cap } = await tokenOp();
      await mint(usdc.address, op.sender, cap - 1n);
      assert.deepEqual(await simulateOp(chain.fx, op), {
        reason: AA33,
        inner: { errorName: 'TokenBalanceTooLow', args: [usdc.address, cap - 1n, cap] },
      });
      await mint(usdc.address, op.sender, 1n);
      assert.equal(await failedOpReason(chain.fx, op), 'ok');
    });

    it(`refuses at validation without an allowance or an approval in callData (${AA33})`, async () => {
      const { op, cap } = await tokenOp({ approve: null });
      await mint(usdc.address, op.sender, 10n ** 12n);
      assert.deepEqual(await simulateOp(chain.fx, op), {
        reason: AA33,
        inner: { errorName: 'TokenAllowanceTooLow', args: [usdc.address, 0n, cap] },
      });
    });

    it(`refuses at validation an approval in callData below the maximum charge (${AA33})`, async () => {
      const base = await tokenOp();
      const { op } = await tokenOp({ approve: { token: usdc.address, amount: base.cap - 1n } });
      await mint(usdc.address, op.sender, 10n ** 12n);
      assert.equal((await simulateOp(chain.fx, op)).inner?.errorName, 'TokenAllowanceTooLow');
    });

    it('finds an approval packed ERC-7579 style (20 bytes off the word grid) and refuses one elsewhere', async () => {
      const base = await buildDeployingOp(chain.fx, { callGasLimit: CALL_GAS, paymasterPostOpGasLimit: POST_OP_GAS });
      const cap = maxTokenCostV07(signedGasOf(base), base.maxFeePerGas, price, version);
      await mint(usdc.address, base.sender, 10n ** 12n);
      /** Validation of an op signed with this callData (the signature is checked first, so it must be valid). */
      const validateWith = async (callData: Hex) => {
        const { op } = await tokenOp({ approve: null, maxTokenCost: cap, guaranteed: true, overrides: { callData } });
        return validateAsEntryPoint(chain.fx, op);
      };
      const accepted = async (callData: Hex, label: string) => {
        const result = await validateWith(callData);
        assert.ok(result.ok && result.context !== '0x' && (result.validationData & 1n) === 0n, label);
      };
      const execute7579 = parseAbi(['function execute(bytes32 mode, bytes executionCalldata)']);
      // ERC-7579 single execution: target(20) || value(32) || callData, so approve starts at 4 + 32·4 + 20.
      const single = (inner: Hex) =>
        encodeFunctionData({
          abi: execute7579,
          functionName: 'execute',
          args: [`0x${'00'.repeat(32)}`, concat([usdc.address, numberToHex(0n, { size: 32 }), inner])],
        });
      await accepted(single(approveCall(cap)), 'ERC-7579 single execution');
      // ERC-7579 batch: ABI-encoded (target, value, callData)[] puts each callData on the grid.
      const batch = concat([
        '0x12345678',
        encodeAbiParameters(parseAbiParameters('(address,uint256,bytes)[]'), [[[usdc.address, 0n, approveCall(cap)]]]),
      ]);
      await accepted(batch, 'ERC-7579 batch');
      const refusal = { ok: false, errorName: 'TokenAllowanceTooLow', args: [usdc.address, 0n, cap] };
      // Mode 1 cannot use an approval batched in callData: it runs after validation, where mode 1 prefunds.
      const { op: prefunding } = await tokenOp({
        approve: null,
        maxTokenCost: cap,
        guaranteed: false,
        overrides: { callData: single(approveCall(cap)) },
      });
      assert.deepEqual(await validateAsEntryPoint(chain.fx, prefunding), refusal);
      // The same approval one byte further: on neither grid, so not recognised.
      assert.deepEqual(await validateWith(single(concat(['0x00', approveCall(cap)]))), refusal);
      // An approval of another spender, or of less than the cap, does not count.
      const otherSpender = encodeFunctionData({
        abi: devTokenAbi,
        functionName: 'approve',
        args: [COUNTER_ADDRESS, cap],
      });
      assert.deepEqual(await validateWith(single(otherSpender)), refusal);
      assert.deepEqual(await validateWith(single(approveCall(cap - 1n))), refusal);
    });

    it('returns the context postOp needs: sender, token, price, cap, the penalty bound and no prefund (mode 2, approval batched), far under 2,048 bytes', async () => {
      const { op, cap } = await tokenOp();
      await mint(usdc.address, op.sender, 10n ** 12n);
      const result = await validateAsEntryPoint(chain.fx, op);
      assert.ok(result.ok);
      const expected = encodeAbiParameters(CONTEXT, [
        op.sender,
        usdc.address,
        price.exchangeRate,
        price.priceMarkup,
        cap,
        maxPenaltyGas({ ...op, version }),
        false,
      ]);
      assert.equal(result.context, expected);
      // ERC-7562 (EREP-050 and the context limit): a staked paymaster's context is at most 2,048 bytes.
      assert.equal(size(result.context), 224);
      const { validUntil, validAfter } = chain.window;
      assert.equal(result.validationData, (BigInt(validUntil) << 160n) | (BigInt(validAfter) << 208n));
    });

    type TokenData = ReturnType<typeof decodePaymasterAndDataV07>;
    const tampers: Array<[string, (d: TokenData) => TokenData]> = [
      [
        'exchangeRate',
        (d) => ({ ...d, fields: { ...tokenFields(d), exchangeRate: tokenFields(d).exchangeRate - 1n } }),
      ],
      ['token', (d) => ({ ...d, fields: { ...tokenFields(d), token: other.address } })],
      ['priceMarkup', (d) => ({ ...d, fields: { ...tokenFields(d), priceMarkup: tokenFields(d).priceMarkup - 1 } })],
      [
        'maxTokenCost',
        (d) => ({ ...d, fields: { ...tokenFields(d), maxTokenCost: tokenFields(d).maxTokenCost + 1n } }),
      ],
      ['validUntil', (d) => ({ ...d, validUntil: d.validUntil + 1 })],
      [
        'maxCallGasLimit (a gas cap)',
        (d) => ({ ...d, caps: { ...d.caps, maxCallGasLimit: d.caps.maxCallGasLimit + 1n } }),
      ],
      ['the mode (token data re-signed as sponsored)', (d) => ({ ...d, fields: { mode: 0 } })],
      [
        'the token mode (2 → 1, guaranteed turned into prefunded)',
        (d) => ({ ...d, fields: { ...tokenFields(d), guaranteed: false } }),
      ],
    ];
    function tokenFields(d: TokenData) {
      if (d.fields.mode !== 1) throw new Error('expected token mode');
      return d.fields;
    }
    for (const [field, change] of tampers) {
      it(`rejects ${field} changed after the paymaster signed with ${AA34}`, async () => {
        const { op } = await tokenOp({
          mutate: (signed) => ({
            ...signed,
            paymasterAndData: encodePaymasterAndDataV07(change(decodePaymasterAndDataV07(signed.paymasterAndData))),
          }),
        });
        await mint(usdc.address, op.sender, 10n ** 12n);
        await mint(other.address, op.sender, 10n ** 30n);
        assert.equal(await failedOpReason(chain.fx, op), AA34);
      });
    }

    it(`checks the signature before the balance: a tampered op without funds is ${AA34}, not ${AA33}`, async () => {
      const { op } = await tokenOp({
        mutate: (signed) => ({ ...signed, callGasLimit: signed.callGasLimit + 1n }),
      });
      assert.equal(await failedOpReason(chain.fx, op), AA34);
    });

    it(`rejects an expired quote with ${AA32}`, async () => {
      const now = await latestTimestamp(chain.fx);
      chain.window = { validUntil: now - 60, validAfter: 0 };
      const { op } = await tokenOp();
      await mint(usdc.address, op.sender, 10n ** 12n);
      assert.equal(await failedOpReason(chain.fx, op), AA32);
    });

    for (const priceMarkup of [999_999, 2_000_001]) {
      it(`refuses a price markup of ${priceMarkup}, outside 1e6..2e6 (${AA33}, PriceMarkupOutOfRange)`, async () => {
        const { op } = await tokenOp({ priceMarkup, maxTokenCost: 10n ** 6n });
        await mint(usdc.address, op.sender, 10n ** 12n);
        assert.deepEqual(await simulateOp(chain.fx, op), {
          reason: AA33,
          inner: { errorName: 'PriceMarkupOutOfRange', args: [priceMarkup] },
        });
      });
    }

    // 186: the layout before the gas caps.
    for (const length of [186, 209, 211, 219, 221]) {
      it(`reverts on a ${length}-byte token paymasterAndData (${AA33})`, async () => {
        const { op } = await tokenOp();
        const raw = concat([op.paymasterAndData, `0x${'00'.repeat(20)}`]);
        const truncated = { ...op, paymasterAndData: slice(raw, 0, length) };
        const outcome = await simulateOp(chain.fx, await signAccount(chain.fx, truncated));
        assert.equal(outcome.reason, AA33);
        assert.equal(outcome.inner?.errorName, 'InvalidPaymasterDataLength');
        assert.equal(size(truncated.paymasterAndData), length);
      });
    }

    it('accepts a token op with its signature in the v0.9 suffix', async () => {
      const base = await buildDeployingOp(chain.fx, { callGasLimit: CALL_GAS, paymasterPostOpGasLimit: POST_OP_GAS });
      const cap = maxTokenCostV07(signedGasOf(base), base.maxFeePerGas, price, version);
      const op = { ...base, callData: batchWithApproval(usdc.address, cap) };
      const signed = await signPaymaster(chain.fx, op, {
        ...chain.window,
        token: { token: usdc.address, ...price, maxTokenCost: cap, guaranteed: true },
        signatureInSuffix: true,
      });
      assert.equal(size(signed.paymasterAndData), 220);
      await mint(usdc.address, op.sender, 10n ** 12n);
      const { receipt, event } = await handleOne(chain.fx, await signAccount(chain.fx, signed));
      assert.equal(event.args.success, true);
      assert.equal(chargedEvents(receipt.logs).length, 1);
    });

    it('executes an op signed with gas caps above its limits: maxTokenCost from the caps bounds the charge', async () => {
      const caps: GasCapsV07 = {
        maxVerificationGasLimit: 600_000n,
        maxCallGasLimit: 2n * CALL_GAS,
        maxPreVerificationGas: 100_000n,
      };
      // The service signs before the limits are known: zero limits, caps, maxTokenCost from the caps.
      const unsigned = await buildDeployingOp(chain.fx, {
        verificationGasLimit: 0n,
        callGasLimit: 0n,
        preVerificationGas: 0n,
        paymasterPostOpGasLimit: POST_OP_GAS,
      });
      const maxTokenCost = maxTokenCostV07(signedGasOf(unsigned, caps), unsigned.maxFeePerGas, price, version);
      const exact = maxTokenCostV07(
        signedGasOf({
          ...unsigned,
          verificationGasLimit: 400_000n,
          callGasLimit: CALL_GAS,
          preVerificationGas: 60_000n,
        }),
        unsigned.maxFeePerGas,
        price,
        version,
      );
      assert.ok(maxTokenCost > exact, 'the caps cost more than the limits they bound');
      const op = { ...unsigned, callData: batchWithApproval(usdc.address, maxTokenCost) };
      const signed = await signPaymaster(chain.fx, op, {
        ...chain.window,
        caps,
        token: { token: usdc.address, ...price, maxTokenCost, guaranteed: true },
      });
      // Then the bundler's estimate, within the caps, and the account's signature.
      const estimated = { verificationGasLimit: 400_000n, callGasLimit: CALL_GAS, preVerificationGas: 60_000n };
      const final = await signAccount(chain.fx, { ...signed, ...estimated });
      await mint(usdc.address, op.sender, 10n ** 12n);
      // A limit above its cap: a signature failure (AA34), never a revert.
      const over = await signAccount(chain.fx, { ...signed, ...estimated, callGasLimit: caps.maxCallGasLimit + 1n });
      assert.equal(await failedOpReason(chain.fx, over), AA34);
      const depositBefore = await paymasterDeposit(chain.fx);
      const { receipt, event } = await handleOne(chain.fx, final);
      assert.equal(event.args.success, true);
      const [charged] = chargedEvents(receipt.logs);
      assert.ok(charged !== undefined && charged.args.charge <= maxTokenCost);
      const dropped = depositBefore - (await paymasterDeposit(chain.fx));
      assert.ok(dropped <= worstCaseCostV07(signedGasOf(final, caps), final.maxFeePerGas));
    });

    it('never charges more than the signed maximum', async () => {
      const { op } = await tokenOp({ maxTokenCost: 7n });
      await mint(usdc.address, op.sender, 10n ** 12n);
      const { receipt, event } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true);
      const [charged] = chargedEvents(receipt.logs);
      assert.equal(charged?.args.charge, 7n);
      assert.equal(await balanceOf(usdc.address, feeReceiver), 7n);
    });

    it('reverts the op’s execution when postOp cannot collect the fee; the paymaster pays the gas', async () => {
      // The approval goes to the wrong token: validation sees an approval of the paymaster and passes, postOp
      // cannot transfer USDC and reverts, and the EntryPoint undoes the op's execution (approval and call).
      const { op } = await tokenOp({ approve: { token: other.address, amount: maxUint256 } });
      await mint(usdc.address, op.sender, 10n ** 12n);
      const depositBefore = await paymasterDeposit(chain.fx);
      const { receipt, event } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, false, 'the op is reported failed');
      assert.equal(await counterValue(chain.fx), 0n, "the op's effects were undone");
      assert.equal(chargedEvents(receipt.logs).length, 0);
      assert.equal(await balanceOf(usdc.address, feeReceiver), 0n);
      const reverted = parseEventLogs({ abi: entryPoint09Abi, eventName: 'PostOpRevertReason', logs: receipt.logs });
      assert.equal(reverted.length, 1, 'PostOpRevertReason emitted');
      assert.equal(
        await chain.fx.client.readContract({
          address: other.address,
          abi: devTokenAbi,
          functionName: 'allowance',
          args: [op.sender, chain.fx.paymaster],
        }),
        0n,
        'the approval in callData was undone too',
      );
      assert.equal(await paymasterDeposit(chain.fx), depositBefore - event.args.actualGasCost, 'the paymaster paid');
      assert.ok(event.args.actualGasCost > 0n);
    });

    it('measures the paymasterVerificationGasLimit and paymasterPostOpGasLimit a token op needs', async (t) => {
      /** Binary search of the smallest limit `reason` passes with (AA36 "over pmVerificationGasLimit" below). */
      const smallestPassing = async (reason: (limit: bigint) => Promise<string>) => {
        let low = 0n;
        let high = 200_000n;
        assert.equal(await reason(high), 'ok');
        while (high - low > 1n) {
          const mid = (low + high) / 2n;
          if ((await reason(mid)) === 'ok') high = mid;
          else low = mid;
        }
        assert.match(await reason(low), /AA36/);
        return high;
      };
      const validationNeeds = async (approve: 'allowance' | 'callData') => {
        if (approve === 'callData') {
          const sample = await tokenOp();
          await mint(usdc.address, sample.op.sender, 10n ** 12n);
          return smallestPassing(async (limit) => {
            const { op } = await tokenOp({ overrides: { paymasterVerificationGasLimit: limit } });
            return failedOpReason(chain.fx, op);
          });
        }
        // A deployed account whose allowance is in place (its first op approved the maximum).
        const first = await tokenOp({ approve: { token: usdc.address, amount: maxUint256 } });
        await mint(usdc.address, first.op.sender, 10n ** 12n);
        assert.equal((await handleOne(chain.fx, first.op)).event.args.success, true);
        return smallestPassing(async (limit) => {
          const next = await buildDeployingOp(chain.fx, {
            initCode: '0x',
            verificationGasLimit: 100_000n,
            paymasterVerificationGasLimit: limit,
            paymasterPostOpGasLimit: POST_OP_GAS,
          });
          const cap = maxTokenCostV07(signedGasOf(next), next.maxFeePerGas, price, version);
          const token = { token: usdc.address, ...price, maxTokenCost: cap };
          const signed = await signPaymaster(chain.fx, next, { ...chain.window, token });
          return failedOpReason(chain.fx, await signAccount(chain.fx, signed));
        });
      };
      /** Runs `work` and puts the chain back as it was, so each measurement starts from the suite's state. */
      const isolated = async <T>(work: () => Promise<T>): Promise<T> => {
        const snapshot = await chain.fx.client.snapshot();
        try {
          return await work();
        } finally {
          await chain.fx.client.revert({ id: snapshot });
        }
      };
      const viaCallData = await isolated(() => validationNeeds('callData'));
      const viaAllowance = await isolated(() => validationNeeds('allowance'));
      // postOp: the smallest limit with which the op still succeeds (a postOp out of gas reverts the op).
      const succeeds = (limit: bigint) =>
        isolated(async () => {
          const { op } = await tokenOp({ overrides: { paymasterPostOpGasLimit: limit } });
          await mint(usdc.address, op.sender, 10n ** 12n);
          return (await handleOne(chain.fx, op)).event.args.success;
        });
      let low = 0n;
      let high = POST_OP_GAS;
      assert.equal(await succeeds(high), true);
      while (high - low > 64n) {
        const mid = (low + high) / 2n;
        if (await succeeds(mid)) high = mid;
        else low = mid;
      }
      // Mode 1's postOp (refund to the account, payment to an empty fee receiver), on a deployed account.
      const prefundedSucceeds = (limit: bigint) =>
        isolated(async () => {
          await accountWithAllowance();
          await setFeeReceiver(chain.fx, getAddress('0x00000000000000000000000000000000fee0fee1'));
          const { op } = await prefundedOp({ paymasterPostOpGasLimit: limit });
          const { receipt, event } = await handleOne(chain.fx, op);
          // Out of gas, postOp reverts (the op with it) and the prefund stays: success and a refund mean it ran.
          return event.args.success && transfers(receipt.logs).length === 3;
        });
      let low1 = 0n;
      let high1 = POST_OP_GAS;
      assert.equal(await prefundedSucceeds(high1), true);
      while (high1 - low1 > 64n) {
        const mid = (low1 + high1) / 2n;
        if (await prefundedSucceeds(mid)) high1 = mid;
        else low1 = mid;
      }
      t.diagnostic(
        `v${version}: token validation needs paymasterVerificationGasLimit >= ${viaCallData} (mode 2, approval in callData of a new account), ${viaAllowance} (mode 1, prefund from an allowance in place); postOp needs paymasterPostOpGasLimit >= ~${high} (mode 2: transfer to an empty fee receiver), ~${high1} (mode 1: refund and payment to an empty fee receiver)`,
      );
      assert.ok(high < POST_OP_OVERHEAD_V07, 'POST_OP_OVERHEAD covers postOp itself');
      assert.ok(high1 < POST_OP_OVERHEAD_V07, 'POST_OP_OVERHEAD covers the prefunded postOp');
    });
  });
}
