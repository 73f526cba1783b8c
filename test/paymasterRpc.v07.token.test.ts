import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, concat, encodeFunctionData, erc20Abi, type Hex, pad, parseEventLogs } from 'viem';
import { entryPoint07Abi, entryPoint08Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { opKey } from '../src/chain/opKey.js';
import { MODE_TOKEN } from '../src/paymaster/entryPoints/paymasterModes.js';
import { weiToTokenUnits } from '../src/paymaster/entryPoints/tokenMath.js';
import { FEE_RECEIVER_SLOT } from '../src/paymaster/entryPoints/v07/entryPointV07.js';
import { decodePaymasterAndDataV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { COUNTER_ADDRESS, counterValue, mintToken, tokenBalance } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { decimalWire, hexWire, newSimpleAccountOp, quantity, rpcV2, type V07Version } from './helpers/rpcV07.js';

/**
 * The token mode on EntryPoint v0.7 and v0.8 through /api/v2: a quote, the client's approval of it batched into
 * the op, the final data (Biconomy's pm_sponsorUserOperation, and the single ERC-7677 data call that
 * @biconomy/abstractjs makes before its bundler estimates), the op executed with handleOps on the canonical
 * EntryPoint: the paymaster's deposit pays actualGasCost, the fee receiver is paid the contract's charge, which is
 * at most the signed maximum, itself at most what the user approved after the quote. And the refusals: a charge
 * that could not be collected is refused by simulation before anything is signed.
 */
let app: RpcFixture;
let usdc: DevTokenInfo;
let pdt: DevTokenInfo;
before(async () => {
  // Its flows batch their approval (mode 2): the dApp guarantees them.
  app = await startRpcFixture({ tokens: true, tokenGuarantees: true });
  [usdc, pdt] = app.fx.tokens as [DevTokenInfo, DevTokenInfo];
});
after(() => app.close());

const ABIS = { '0.7': entryPoint07Abi, '0.8': entryPoint08Abi } as const;
// PatronPaymasterV07 has PatronPaymaster's (v0.6) feeReceiver() and TokenCharged event, signature for signature.
const chargedAbi = patronPaymasterAbi;
const feeReceiverAbi = patronPaymasterAbi;

const approve = (spender: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] });
const zeroGas = { callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n };

interface Quote {
  readonly tokenAddress: Address;
  readonly decimal: number;
  readonly maxGasFee: number;
}

/**
 * A fresh account's op with the approval a Biconomy client batches after a quote: on v0.7 (the Biconomy dialect's
 * version on /api/v2) of the quote's maxGasFee; on v0.8, which that dialect does not name, of a fixed 20 USDC.
 */
async function quotedOp(version: V07Version, approveToken: Address = usdc.address) {
  const first = await newSimpleAccountOp(app.fx, version, [{ to: COUNTER_ADDRESS, data: '0x01' }]);
  await mintToken(app.fx, usdc.address, first.op.sender, 1_000_000_000n);
  const approved = version === '0.7' ? await quote(first.op) : 20_000_000n;
  const paymaster = app.fx.paymasters[version];
  const callData = await first.account.encodeCalls([
    { to: approveToken, data: approve(paymaster, approved) },
    { to: COUNTER_ADDRESS, data: '0x01' },
  ]);
  return { account: first.account, op: { ...first.op, callData }, approved };
}

/** The USDC quote's maxGasFee in base units as @biconomy/abstractjs asks for it (getTokenPaymasterQuotes). */
async function quote(op: Record<string, unknown>): Promise<bigint> {
  const r = await rpcV2(app, 'pm_getFeeQuoteOrData', [
    decimalWire({ ...op, ...zeroGas, paymasterVerificationGasLimit: 0n, paymasterPostOpGasLimit: 0n }),
    { mode: 'ERC20', calculateGasLimits: true, expiryDuration: 6000, tokenInfo: { tokenList: [usdc.address] } },
  ]);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const result = r.body.result ?? {};
  assert.equal(result.paymasterAddress, app.fx.paymasters['0.7'], 'the v0.7 paymaster is quoted on /api/v2');
  const [q] = result.feeQuotes as [Quote];
  assert.equal(q.tokenAddress, usdc.address);
  return BigInt(Math.ceil(q.maxGasFee * 10 ** q.decimal));
}

/** Signs and submits the op; checks what the deposit, the fee receiver and the request log saw. */
async function execute(
  version: V07Version,
  account: Awaited<ReturnType<typeof newSimpleAccountOp>>['account'],
  op: UserOperation<'0.7'>,
  limits: { approved: bigint; capped: boolean },
) {
  const entryPoint = app.fx.entryPoints[version];
  const paymaster = app.fx.paymasters[version];
  const signed = { ...op, signature: await account.signUserOperation({ ...op, chainId: app.fx.chain.chainId }) };
  const abi = ABIS[version];
  const receiver = await app.fx.client.readContract({
    address: paymaster,
    abi: feeReceiverAbi,
    functionName: 'feeReceiver',
  });
  const deposit = () =>
    app.fx.client.readContract({ address: entryPoint, abi, functionName: 'balanceOf', args: [paymaster] });
  const [depositBefore, receiverBefore, counter] = await Promise.all([
    deposit(),
    tokenBalance(app.fx, usdc.address, receiver),
    counterValue(app.fx),
  ]);
  const hash = await app.fx.bundler.writeContract({
    address: entryPoint,
    abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation(signed)], app.fx.bundler.account.address],
    gas: 5_000_000n,
  });
  const receipt = await app.fx.client.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  const [event] = parseEventLogs({ abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  assert.ok(event, 'UserOperationEvent');
  assert.equal(event.args.success, true, 'the op executed');
  assert.equal(depositBefore - (await deposit()), event.args.actualGasCost, 'the deposit paid actualGasCost');
  assert.equal(await counterValue(app.fx), counter + 1n);
  const [charged] = parseEventLogs({ abi: chargedAbi, logs: receipt.logs, eventName: 'TokenCharged' });
  assert.ok(charged, 'TokenCharged');
  const signedMax = decodePaymasterAndDataV07(concat([paymaster, pad('0x', { size: 32 }), op.paymasterData ?? '0x']));
  assert.equal(signedMax.fields.mode, MODE_TOKEN);
  const maxTokenCost = signedMax.fields.mode === MODE_TOKEN ? signedMax.fields.maxTokenCost : 0n;
  assert.ok(charged.args.charge > 0n);
  assert.ok(charged.args.charge <= maxTokenCost, `charge ${charged.args.charge} ≤ signed maximum ${maxTokenCost}`);
  assert.ok(maxTokenCost <= limits.approved, `signed maximum ${maxTokenCost} ≤ approved ${limits.approved}`);
  assert.equal((await tokenBalance(app.fx, usdc.address, receiver)) - receiverBefore, charged.args.charge);
  // Settlement finds what Patron recorded at signing (by hash, or by op key for a signature of caps).
  await app.ctx.deps.requestLog.flush();
  await app.ctx.deps.settlement.runOnce();
  const key = limits.capped
    ? opKey({ chainId: app.fx.chain.chainId, entryPoint, sender: signed.sender, nonce: signed.nonce })
    : event.args.userOpHash;
  const logged = await app.ctx.deps.store.requestLog.query({
    accountId: app.tenant.accountId,
    sender: signed.sender.toLowerCase(),
    limit: 10,
  });
  const row = logged.find((r) => r.userOpHash === key.toLowerCase());
  assert.ok(row, 'the request log has the signed op');
  assert.equal(row.actualCostWei, event.args.actualGasCost.toString());
  return { charge: charged.args.charge, maxTokenCost, actualGasCost: event.args.actualGasCost };
}

const unpackedPaymaster = (p: Record<string, unknown>) => ({
  paymaster: p.paymaster as Address,
  paymasterVerificationGasLimit: quantity(p.paymasterVerificationGasLimit),
  paymasterPostOpGasLimit: quantity(p.paymasterPostOpGasLimit),
  paymasterData: p.paymasterData as Hex,
});

test("v0.7: quote, approval batched, Biconomy's pm_sponsorUserOperation: executes, charged at most the quote", async () => {
  const { account, op, approved } = await quotedOp('0.7');
  const r = await rpcV2(app, 'pm_sponsorUserOperation', [
    decimalWire({ ...op, ...zeroGas }),
    { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { feeTokenAddress: usdc.address } },
  ]);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const p = r.body.result ?? {};
  assert.equal(p.mode, 'ERC20');
  assert.equal(p.paymaster, app.fx.paymasters['0.7']);
  await execute(
    '0.7',
    account,
    {
      ...op,
      callGasLimit: quantity(p.callGasLimit),
      verificationGasLimit: quantity(p.verificationGasLimit),
      preVerificationGas: quantity(p.preVerificationGas),
      ...unpackedPaymaster(p),
    } as UserOperation<'0.7'>,
    { approved, capped: false },
  );
});

/** The token mode's final data by the single ERC-7677 call @biconomy/abstractjs makes (it names the EntryPoint). */
const tokenData = (version: V07Version, op: Record<string, unknown>) =>
  rpcV2(app, 'pm_getPaymasterData', [
    hexWire({ ...op, ...zeroGas }),
    app.fx.entryPoints[version],
    `0x${app.fx.chain.chainId.toString(16)}`,
    { mode: 'ERC20', calculateGasLimits: true, expiryDuration: 6000, tokenInfo: { feeTokenAddress: usdc.address } },
  ]);

for (const version of ['0.7', '0.8'] as const) {
  describe(`ERC20 mode on EntryPoint v${version} (/api/v2)`, () => {
    test("abstractjs's single ERC-7677 data call in ERC20 mode: an op at the signed caps, the most a submitter can use, executes and its charge covers what the deposit paid", async () => {
      const { account, op, approved } = await quotedOp(version);
      const r = await tokenData(version, op);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const d = r.body.result ?? {};
      const signed = decodePaymasterAndDataV07(
        concat([d.paymaster as Hex, pad('0x', { size: 32 }), d.paymasterData as Hex]),
      );
      const { caps } = signed;
      for (const [limit, cap] of [
        ['callGasLimit', caps.maxCallGasLimit],
        ['verificationGasLimit', caps.maxVerificationGasLimit],
        ['preVerificationGas', caps.maxPreVerificationGas],
      ] as const) {
        assert.ok(quantity(d[limit]) <= cap, `Patron's ${limit} ${d[limit]} within its cap ${cap}`);
      }
      // A submitter (the user as their own bundler) sets every gas value to its cap.
      const { charge, actualGasCost } = await execute(
        version,
        account,
        {
          ...op,
          callGasLimit: caps.maxCallGasLimit,
          verificationGasLimit: caps.maxVerificationGasLimit,
          preVerificationGas: caps.maxPreVerificationGas,
          ...unpackedPaymaster(d),
        } as UserOperation<'0.7'>,
        { approved, capped: true },
      );
      // The caps were chosen so that the signed maximum fits the approval and still covers the worst case: the
      // charge is never capped below what the paymaster paid (in the token, at the signed price).
      const price =
        signed.fields.mode === MODE_TOKEN
          ? { exchangeRate: signed.fields.exchangeRate, priceMarkup: signed.fields.priceMarkup }
          : undefined;
      assert.ok(price);
      const cost = weiToTokenUnits(actualGasCost, price);
      assert.ok(charge >= cost, `charge ${charge} covers the deposit's ${actualGasCost} wei (${cost} units)`);
    });

    test('an approval of another token: the charge could not be collected, refused by simulation (-32020)', async () => {
      const { op } = await quotedOp(version, pdt.address);
      const r = await tokenData(version, op);
      assert.equal(r.body.error?.code, -32020, JSON.stringify(r.body));
      assert.match(r.body.error?.message ?? '', /USDC charge of this operation could not be collected; approve/);
      assert.doesNotMatch(r.body.error?.message ?? '', /unpaid/, 'v0.7+ keeps no unpaid charges');
    });

    test('an account holding less than the maximum charge is refused, named', async () => {
      const poor = await newSimpleAccountOp(app.fx, version, [{ to: COUNTER_ADDRESS, data: '0x01' }]);
      const callData = await poor.account.encodeCalls([
        { to: usdc.address, data: approve(app.fx.paymasters[version], 10n ** 12n) },
        { to: COUNTER_ADDRESS, data: '0x01' },
      ]);
      await mintToken(app.fx, usdc.address, poor.op.sender, 1n);
      const r = await tokenData(version, { ...poor.op, callData });
      assert.ok(r.body.error, JSON.stringify(r.body));
      assert.match(r.body.error.message, /holds 1 base units of USDC, below the maximum charge/);
    });
  });
}

test("PatronPaymasterV07's feeReceiver is in the storage slot the charge probe overrides, on every version", async () => {
  for (const version of ['0.7', '0.8', '0.9'] as const) {
    const paymaster = app.fx.paymasters[version];
    const receiver = await app.fx.client.readContract({
      address: paymaster,
      abi: feeReceiverAbi,
      functionName: 'feeReceiver',
    });
    const slot = await app.fx.client.getStorageAt({ address: paymaster, slot: FEE_RECEIVER_SLOT });
    assert.equal(slot, pad(receiver.toLowerCase() as Hex, { size: 32 }), version);
  }
});

test("no mode on v0.7: a policy's refusal falls back to token quotes from the v0.7 paymaster", async () => {
  const { op } = await newSimpleAccountOp(app.fx, '0.7', [{ to: COUNTER_ADDRESS, data: '0x01' }]);
  const policy = await app.ctx.deps.policies.create({
    dappId: app.tenant.dappId,
    name: 'no-this-sender-v07',
    rules: { senders: { block: [op.sender] } },
  });
  try {
    const r = await rpcV2(app, 'pm_getFeeQuoteOrData', [hexWire(op), {}]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.result?.mode, 'ERC20');
    assert.equal(r.body.result?.paymasterAddress, app.fx.paymasters['0.7']);
    assert.ok(Array.isArray(r.body.result?.feeQuotes) && r.body.result.feeQuotes.length > 0);
  } finally {
    await app.ctx.deps.policies.delete({ dappId: app.tenant.dappId, policyId: policy.id });
  }
});
