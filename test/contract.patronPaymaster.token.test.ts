import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Address,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  type Hex,
  isAddressEqual,
  maxUint256,
  pad,
  parseAbiParameters,
  parseEventLogs,
  zeroHash,
} from 'viem';
import { devTokenAbi, patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { viemKeccak } from '../src/paymaster/entryPoints/abiWords.js';
import {
  maxTokenCostV06,
  POST_OP_OVERHEAD,
  tokenCharge,
  userOpGasPrice,
} from '../src/paymaster/entryPoints/tokenMath.js';
import {
  decodePaymasterAndData,
  encodeTokenPaymasterAndData,
  TOKEN_PAYMASTER_AND_DATA_LENGTH,
  tokenHashV06,
  type UserOperationV06,
} from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { TOKEN_MIN_VERIFICATION_GAS, TOKEN_VALIDATION_GAS } from '../src/paymaster/token/tokenPaymasterService.js';
import {
  buildDeployingOp,
  COUNTER_ADDRESS,
  failedOpReason,
  latestTimestamp,
  mintToken,
  revertOf,
  setFeeReceiver,
  signAccount,
  signPaymaster,
  signTokenPaymaster,
  simpleAccountAbi,
  submitHandleOps,
  tokenBalance,
} from './helpers/patronPaymasterV06.js';
import { usePatronChain } from './helpers/usePatronChain.js';

const AA34 = 'AA34 signature error';
const AA32 = 'AA32 paymaster expired or not due';
const BALANCE_LOW = 'AA33 reverted: Patron: token balance below the maximum charge';
const ALLOWANCE_LOW = 'AA33 reverted: Patron: token allowance below the maximum charge';

/** 3000 USD per ETH, 1 USD per token, 6 decimals: 3000e6 base units per 1e18 wei. */
const RATE_USDC = 3000n * 10n ** 6n;
const MARKUP_10_PERCENT = 1_100_000;

describe('PatronPaymaster (EntryPoint v0.6, token mode)', () => {
  let usdc: DevTokenInfo;
  let other: DevTokenInfo;
  const feeReceiver: Address = getAddress('0x00000000000000000000000000000000fee0fee0');
  const chain = usePatronChain({
    async setUp(fx) {
      [usdc, other] = fx.tokens as [DevTokenInfo, DevTokenInfo];
      await setFeeReceiver(fx, feeReceiver);
    },
  });

  const balanceOf = (token: Address, who: Address) => tokenBalance(chain.fx, token, who);
  const mint = (token: Address, to: Address, amount: bigint) => mintToken(chain.fx, token, to, amount);
  const approveCall = (amount: bigint) =>
    encodeFunctionData({ abi: devTokenAbi, functionName: 'approve', args: [chain.fx.paymaster, amount] });
  /** SimpleAccount.executeBatch: the approval first, then the user's call (the counter), as Biconomy batches it. */
  const batchWithApproval = (approveToken: Address, amount: bigint) =>
    encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: 'executeBatch',
      args: [
        [approveToken, COUNTER_ADDRESS],
        [approveCall(amount), '0x'],
      ],
    });

  interface TokenOpOptions {
    readonly approve?: { token: Address; amount: bigint } | null;
    readonly maxTokenCost?: bigint;
    readonly token?: Address;
    readonly priceMarkup?: number;
    readonly mutate?: (op: UserOperationV06) => UserOperationV06;
    /** Mode 2; default: when the approval is batched in callData (mode 1 cannot use it). */
    readonly guaranteed?: boolean;
  }

  /** A deploying SimpleAccount op paying in USDC, signed by the paymaster and the account. */
  async function tokenOp(o: TokenOpOptions = {}) {
    const base = await buildDeployingOp(chain.fx);
    const price = { exchangeRate: RATE_USDC, priceMarkup: o.priceMarkup ?? MARKUP_10_PERCENT };
    const cap = o.maxTokenCost ?? maxTokenCostV06(base, base.maxFeePerGas, price);
    const approve = o.approve === undefined ? { token: usdc.address, amount: cap } : o.approve;
    const op: UserOperationV06 = {
      ...base,
      callData: approve === null ? base.callData : batchWithApproval(approve.token, approve.amount),
      paymasterAndData: `0x${'00'.repeat(TOKEN_PAYMASTER_AND_DATA_LENGTH)}`,
    };
    const signed = await signTokenPaymaster(chain.fx, op, {
      ...chain.window,
      token: o.token ?? usdc.address,
      ...price,
      maxTokenCost: cap,
      guaranteed: o.guaranteed ?? approve !== null,
    });
    return { op: await signAccount(chain.fx, (o.mutate ?? ((x) => x))(signed)), cap, price };
  }

  async function handleOps(op: UserOperationV06) {
    const { receipt, events } = await submitHandleOps(chain.fx, [op], { gas: 3_000_000n });
    assert.equal(receipt.status, 'success');
    const [event] = events;
    assert.ok(event !== undefined);
    const block = await chain.fx.client.getBlock({ blockNumber: receipt.blockNumber });
    return { receipt, event, baseFee: block.baseFeePerGas ?? 0n };
  }

  it('computes the same hash as getTokenHash', async () => {
    const userOp = await buildDeployingOp(chain.fx);
    const fields = {
      validUntil: 2 ** 48 - 1,
      validAfter: 1_700_000_000,
      token: usdc.address,
      exchangeRate: (1n << 128n) - 1n,
      priceMarkup: 2_000_000,
      maxTokenCost: 123_456_789n,
    };
    const hashes = new Set<string>();
    for (const mode of [1, 2]) {
      const onChain = await chain.fx.client.readContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterAbi,
        functionName: 'getTokenHash',
        args: [
          userOp,
          mode,
          fields.validUntil,
          fields.validAfter,
          fields.token,
          fields.exchangeRate,
          fields.priceMarkup,
          fields.maxTokenCost,
        ],
      });
      const local = tokenHashV06(
        { userOp, chainId: 31337n, paymaster: chain.fx.paymaster, ...fields, guaranteed: mode === 2 },
        viemKeccak,
      );
      assert.equal(`0x${Buffer.from(local).toString('hex')}`, onChain, `mode ${mode}`);
      hashes.add(onChain);
    }
    assert.equal(hashes.size, 2, 'the mode byte is in the hash');
    assert.equal(
      await chain.fx.client.readContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterAbi,
        functionName: 'POST_OP_OVERHEAD',
      }),
      POST_OP_OVERHEAD,
    );
  });

  it('mode 2: charges the formula to the fee receiver in postOp (approval batched with the call), ≤ the signed maximum', async (t) => {
    const { op, cap, price } = await tokenOp();
    await mint(usdc.address, op.sender, 1_000n * 10n ** 6n);
    const depositBefore = await chain.fx.client.readContract({
      address: chain.fx.paymaster,
      abi: patronPaymasterAbi,
      functionName: 'getDeposit',
    });
    const { receipt, event, baseFee } = await handleOps(op);
    assert.equal(event.args.success, true);
    const [charged] = parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenCharged', logs: receipt.logs });
    assert.ok(charged !== undefined, 'TokenCharged emitted');
    // postOp sees actualGasCost before its own gas; the event's actualGasCost includes it, so recompute from
    // the charged event's own figure, which the formula must reproduce exactly.
    const gasPrice = userOpGasPrice(op.maxFeePerGas, op.maxPriorityFeePerGas, baseFee);
    const expected = tokenCharge({ actualGasCost: charged.args.actualGasCost, gasPrice, price, maxTokenCost: cap });
    assert.equal(charged.args.charge, expected);
    assert.equal(await balanceOf(usdc.address, feeReceiver), expected);
    assert.equal(await balanceOf(usdc.address, op.sender), 1_000n * 10n ** 6n - expected);
    assert.ok(expected <= cap, 'never more than the signed maximum');
    // The overhead covers what postOp costs: the charge is at least the deposit the paymaster lost, converted.
    const depositAfter = await chain.fx.client.readContract({
      address: chain.fx.paymaster,
      abi: patronPaymasterAbi,
      functionName: 'getDeposit',
    });
    const spent = depositBefore - depositAfter;
    assert.equal(spent, event.args.actualGasCost);
    const spentInToken = (spent * price.exchangeRate * BigInt(price.priceMarkup) + 10n ** 24n - 1n) / 10n ** 24n;
    assert.ok(expected >= spentInToken, `charge ${expected} covers the deposit spent (${spentInToken})`);
    assert.equal(
      await chain.fx.client.getStorageAt({ address: COUNTER_ADDRESS, slot: zeroHash }),
      `0x${'0'.repeat(63)}1`,
    );
    t.diagnostic(
      `charged ${expected} of cap ${cap}; postOp + overhead margin ${(expected - spentInToken).toString()} units; gas used ${event.args.actualGasUsed}`,
    );
  });

  it('accepts an allowance already in place (no approval in callData)', async () => {
    const first = await tokenOp({ approve: { token: usdc.address, amount: maxUint256 } });
    await mint(usdc.address, first.op.sender, 1_000n * 10n ** 6n);
    assert.equal((await handleOps(first.op)).event.args.success, true);
    // The account now exists: a plain call with nonce 1 and no initCode.
    const base = await buildDeployingOp(chain.fx);
    const second: UserOperationV06 = { ...base, initCode: '0x', verificationGasLimit: 200_000n };
    const price = { exchangeRate: RATE_USDC, priceMarkup: MARKUP_10_PERCENT };
    const cap = maxTokenCostV06(second, second.maxFeePerGas, price);
    const signed = await signTokenPaymaster(chain.fx, second, {
      ...chain.window,
      token: usdc.address,
      ...price,
      maxTokenCost: cap,
    });
    const { event } = await handleOps(await signAccount(chain.fx, signed));
    assert.equal(event.args.success, true);
  });

  const price = { exchangeRate: RATE_USDC, priceMarkup: MARKUP_10_PERCENT };

  /** Deploys the account with a first op (mode 2) approving the paymaster for everything, and funds it. */
  async function accountWithAllowance() {
    const first = await tokenOp({ approve: { token: usdc.address, amount: maxUint256 } });
    await mint(usdc.address, first.op.sender, 1_000n * 10n ** 6n);
    assert.equal((await handleOps(first.op)).event.args.success, true);
    return first.op.sender;
  }

  /** A token op of the deployed account (no initCode, no approval): mode 1 unless `guaranteed`. */
  async function deployedOp(o: { verificationGasLimit?: bigint; maxTokenCost?: bigint; guaranteed?: boolean } = {}) {
    const base = await buildDeployingOp(chain.fx);
    const op: UserOperationV06 = { ...base, initCode: '0x', verificationGasLimit: o.verificationGasLimit ?? 200_000n };
    const cap = o.maxTokenCost ?? maxTokenCostV06(op, op.maxFeePerGas, price);
    const signed = await signTokenPaymaster(chain.fx, op, {
      ...chain.window,
      token: usdc.address,
      ...price,
      maxTokenCost: cap,
      guaranteed: o.guaranteed ?? false,
    });
    return { op: await signAccount(chain.fx, signed), cap };
  }

  const transfers = (logs: Parameters<typeof parseEventLogs>[0]['logs']) =>
    parseEventLogs({ abi: devTokenAbi, eventName: 'Transfer', logs })
      .filter((l) => isAddressEqual(l.address, usdc.address))
      .map((l) => [l.args.from, l.args.to, l.args.value] as const);

  it('mode 1: takes the maximum in validation, refunds the rest and pays the charge in postOp', async () => {
    const sender = await accountWithAllowance();
    const { op, cap } = await deployedOp();
    const before = await balanceOf(usdc.address, sender);
    const receiverBefore = await balanceOf(usdc.address, feeReceiver);
    const depositBefore = await chain.fx.client.readContract({
      address: chain.fx.paymaster,
      abi: patronPaymasterAbi,
      functionName: 'getDeposit',
    });
    const { receipt, event, baseFee } = await handleOps(op);
    assert.equal(event.args.success, true);
    const [charged] = parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenCharged', logs: receipt.logs });
    assert.ok(charged !== undefined);
    const gasPrice = userOpGasPrice(op.maxFeePerGas, op.maxPriorityFeePerGas, baseFee);
    const charge = tokenCharge({ actualGasCost: charged.args.actualGasCost, gasPrice, price, maxTokenCost: cap });
    assert.equal(charged.args.charge, charge);
    const pm = getAddress(chain.fx.paymaster);
    assert.deepEqual(transfers(receipt.logs), [
      [sender, pm, cap],
      [pm, sender, cap - charge],
      [pm, feeReceiver, charge],
    ]);
    assert.equal(await balanceOf(usdc.address, sender), before - charge);
    assert.equal((await balanceOf(usdc.address, feeReceiver)) - receiverBefore, charge);
    assert.equal(await balanceOf(usdc.address, chain.fx.paymaster), 0n);
    const spent =
      depositBefore -
      (await chain.fx.client.readContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterAbi,
        functionName: 'getDeposit',
      }));
    assert.ok(charged.args.actualGasCost + POST_OP_OVERHEAD * gasPrice >= spent, 'the charge covers the deposit spent');
  });

  it('mode 1: refuses at validation an account without an allowance, even with an approval in callData, or short of balance', async () => {
    const { op } = await tokenOp({ guaranteed: false });
    await mint(usdc.address, op.sender, 10n ** 12n);
    assert.equal(await failedOpReason(chain.fx, op), ALLOWANCE_LOW);
    const sender = await accountWithAllowance();
    const balance = await balanceOf(usdc.address, sender);
    const { op: short } = await deployedOp({ maxTokenCost: balance + 1n });
    assert.equal(await failedOpReason(chain.fx, short), BALANCE_LOW);
  });

  it('mode 2 with the allowance already in place prefunds like mode 1', async () => {
    const sender = await accountWithAllowance();
    const { op, cap } = await deployedOp({ guaranteed: true });
    const { receipt, event } = await handleOps(op);
    assert.equal(event.args.success, true);
    assert.deepEqual(transfers(receipt.logs)[0], [sender, getAddress(chain.fx.paymaster), cap]);
  });

  it('mode 1: postOp never reverts once prefunded; a charge the token will not move stays with the paymaster', async () => {
    const sender = await accountWithAllowance();
    const { op } = await deployedOp();
    const before = await balanceOf(usdc.address, sender);
    // feeReceiver (slot 2) set to address(0): OpenZeppelin's ERC-20 refuses transfers to it.
    await chain.fx.client.setStorageAt({ address: chain.fx.paymaster, index: pad('0x02'), value: pad('0x00') });
    const { receipt, event } = await handleOps(op);
    assert.equal(event.args.success, true, 'the op is not reverted');
    const [charged] = parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenCharged', logs: receipt.logs });
    assert.ok(charged !== undefined);
    assert.equal(await balanceOf(usdc.address, chain.fx.paymaster), charged.args.charge);
    assert.equal(await balanceOf(usdc.address, sender), before - charged.args.charge);
    // postOp called by the EntryPoint with a prefunded context the paymaster does not hold: nothing moves, no revert.
    const context = encodeAbiParameters(
      parseAbiParameters('address, address, uint128, uint32, uint128, uint256, uint256, bool'),
      [sender, usdc.address, price.exchangeRate, price.priceMarkup, 10n ** 15n, 1n, 1n, true],
    );
    for (const mode of [0, 1, 2]) {
      await chain.fx.client.simulateContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterAbi,
        functionName: 'postOp',
        args: [mode, context, 1n],
        account: chain.fx.entryPoint,
      });
    }
  });

  it('measures the verificationGasLimit a mode-1 op needs beyond a sponsored one (TOKEN_VALIDATION_GAS)', async (t) => {
    /** Smallest verificationGasLimit with which `build(limit)` is included, succeeds and pays. */
    const smallest = async (build: (limit: bigint) => Promise<UserOperationV06>) => {
      const works = async (limit: bigint) => {
        const snapshot = await chain.fx.client.snapshot();
        try {
          const { receipt, events } = await submitHandleOps(chain.fx, [await build(limit)], { gas: 3_000_000n });
          return (
            receipt.status === 'success' && events[0]?.args.success === true && transfers(receipt.logs).length !== 1
          );
        } catch {
          return false;
        } finally {
          await chain.fx.client.revert({ id: snapshot });
        }
      };
      let low = 0n;
      let high = 300_000n;
      assert.equal(await works(high), true);
      while (high - low > 64n) {
        const mid = (low + high) / 2n;
        if (await works(mid)) high = mid;
        else low = mid;
      }
      return high;
    };
    await accountWithAllowance();
    await setFeeReceiver(chain.fx, getAddress('0x00000000000000000000000000000000fee0fee1'));
    const token = await smallest(async (limit) => (await deployedOp({ verificationGasLimit: limit })).op);
    const sponsored = await smallest(async (limit) => {
      const base = await buildDeployingOp(chain.fx);
      const op = { ...base, initCode: '0x' as Hex, verificationGasLimit: limit };
      return signAccount(chain.fx, await signPaymaster(chain.fx, op, chain.window));
    });
    t.diagnostic(
      `v0.6: a deployed SimpleAccount's mode-1 op needs verificationGasLimit >= ~${token} (prefund, refund, empty fee receiver), sponsored ~${sponsored}: ${token - sponsored} more`,
    );
    assert.ok(token - sponsored <= TOKEN_VALIDATION_GAS, 'TOKEN_VALIDATION_GAS covers the token mode');
    assert.ok(token <= TOKEN_MIN_VERIFICATION_GAS, 'TOKEN_MIN_VERIFICATION_GAS covers a deployed account');
  });

  it('refuses at validation an account whose balance is below the maximum charge', async () => {
    const { op, cap } = await tokenOp();
    await mint(usdc.address, op.sender, cap - 1n);
    assert.equal(await failedOpReason(chain.fx, op), BALANCE_LOW);
    await mint(usdc.address, op.sender, 1n);
    assert.equal(await failedOpReason(chain.fx, op), 'ok');
  });

  it('refuses at validation without an allowance or an approval in callData', async () => {
    const { op } = await tokenOp({ approve: null });
    await mint(usdc.address, op.sender, 10n ** 12n);
    assert.equal(await failedOpReason(chain.fx, op), ALLOWANCE_LOW);
  });

  it('refuses at validation an approval in callData below the maximum charge', async () => {
    const base = await tokenOp();
    const { op } = await tokenOp({ approve: { token: usdc.address, amount: base.cap - 1n } });
    await mint(usdc.address, op.sender, 10n ** 12n);
    assert.equal(await failedOpReason(chain.fx, op), ALLOWANCE_LOW);
  });

  const tampers: Array<[string, (d: ReturnType<typeof decodeTokenData>) => ReturnType<typeof decodeTokenData>]> = [
    ['exchangeRate', (d) => ({ ...d, exchangeRate: d.exchangeRate - 1n })],
    ['token', (d) => ({ ...d, token: other.address })],
    ['priceMarkup', (d) => ({ ...d, priceMarkup: d.priceMarkup - 1 })],
    ['maxTokenCost', (d) => ({ ...d, maxTokenCost: d.maxTokenCost + 1n })],
    ['validUntil', (d) => ({ ...d, validUntil: d.validUntil + 1 })],
    ['the token mode (2 → 1, guaranteed turned into prefunded)', (d) => ({ ...d, guaranteed: false })],
  ];
  function decodeTokenData(paymasterAndData: Hex) {
    const d = decodePaymasterAndData(paymasterAndData);
    if (d.mode !== 1) throw new Error('expected token mode');
    return d;
  }
  for (const [field, change] of tampers) {
    it(`rejects ${field} changed after the paymaster signed with ${AA34}`, async () => {
      const { op } = await tokenOp({
        mutate: (signed) => ({
          ...signed,
          paymasterAndData: encodeTokenPaymasterAndData(change(decodeTokenData(signed.paymasterAndData))),
        }),
      });
      await mint(usdc.address, op.sender, 10n ** 12n);
      await mint(other.address, op.sender, 10n ** 30n);
      assert.equal(await failedOpReason(chain.fx, op), AA34);
    });
  }

  it(`rejects an expired quote with ${AA32}`, async () => {
    const now = await latestTimestamp(chain.fx);
    chain.window = { validUntil: now - 60, validAfter: 0 };
    const { op } = await tokenOp();
    await mint(usdc.address, op.sender, 10n ** 12n);
    assert.equal(await failedOpReason(chain.fx, op), AA32);
  });

  it('refuses a price markup outside 1e6..2e6 (AA33)', async () => {
    const { op } = await tokenOp({ priceMarkup: 999_999, maxTokenCost: 10n ** 6n });
    await mint(usdc.address, op.sender, 10n ** 12n);
    assert.equal(await failedOpReason(chain.fx, op), 'AA33 reverted (or OOG)');
  });

  it('never charges more than the signed maximum', async () => {
    const { op } = await tokenOp({ maxTokenCost: 7n });
    await mint(usdc.address, op.sender, 10n ** 12n);
    const { receipt, event } = await handleOps(op);
    assert.equal(event.args.success, true);
    const [charged] = parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenCharged', logs: receipt.logs });
    assert.equal(charged?.args.charge, 7n);
    assert.equal(await balanceOf(usdc.address, feeReceiver), 7n);
  });

  it('records an uncollectable charge (postOpReverted) instead of reverting the bundle, and collects it later', async () => {
    // The approval goes to the wrong token: validation sees an approval of the paymaster and passes, the first
    // postOp cannot transfer USDC and reverts, the EntryPoint undoes the call and retries postOp, which records.
    const { op, cap } = await tokenOp({ approve: { token: other.address, amount: maxUint256 } });
    await mint(usdc.address, op.sender, 10n ** 12n);
    const { receipt, event } = await handleOps(op);
    assert.equal(event.args.success, false, 'the op is reported failed');
    assert.equal(
      await chain.fx.client.getStorageAt({ address: COUNTER_ADDRESS, slot: zeroHash }),
      `0x${'0'.repeat(64)}`,
      "the op's effects were undone",
    );
    const [failed] = parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenChargeFailed', logs: receipt.logs });
    assert.ok(failed !== undefined && isAddressEqual(failed.args.account, op.sender));
    assert.ok(failed.args.charge > 0n && failed.args.charge <= cap);
    const owed = await chain.fx.client.readContract({
      address: chain.fx.paymaster,
      abi: patronPaymasterAbi,
      functionName: 'unpaidCharges',
      args: [op.sender, usdc.address],
    });
    assert.equal(owed, failed.args.charge);
    // Collecting needs the account's approval; without it the call reverts and the debt stays.
    const collect = () =>
      chain.fx.stranger.simulateContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterAbi,
        functionName: 'collectUnpaidCharge',
        args: [op.sender, usdc.address],
      });
    await assert.rejects(collect());
    await chain.fx.client.impersonateAccount({ address: op.sender });
    await chain.fx.client.setBalance({ address: op.sender, value: 10n ** 18n });
    const approveHash = await chain.fx.client.writeContract({
      account: op.sender,
      address: usdc.address,
      abi: devTokenAbi,
      functionName: 'approve',
      args: [chain.fx.paymaster, maxUint256],
    });
    await chain.fx.client.waitForTransactionReceipt({ hash: approveHash });
    const { request } = await collect();
    await chain.fx.stranger.waitForTransactionReceipt({ hash: await chain.fx.stranger.writeContract(request) });
    assert.equal(await balanceOf(usdc.address, feeReceiver), owed);
    const after = await chain.fx.client.readContract({
      address: chain.fx.paymaster,
      abi: patronPaymasterAbi,
      functionName: 'unpaidCharges',
      args: [op.sender, usdc.address],
    });
    assert.equal(after, 0n);
  });

  it('lets only the owner set the fee receiver', async () => {
    const outcome = await chain.fx.stranger
      .simulateContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterAbi,
        functionName: 'setFeeReceiver',
        args: [chain.fx.stranger.account.address],
      })
      .then(() => undefined, revertOf);
    assert.deepEqual(outcome, { errorName: 'OwnableUnauthorizedAccount', args: [chain.fx.stranger.account.address] });
    assert.equal(
      await chain.fx.client.readContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterAbi,
        functionName: 'feeReceiver',
      }),
      feeReceiver,
    );
  });
});
