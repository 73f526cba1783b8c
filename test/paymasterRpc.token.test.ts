import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, encodeFunctionData, getAddress, type Hex, hexToBytes, parseEventLogs } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { devTokenAbi, patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { maxTokenCostV06 } from '../src/paymaster/entryPoints/tokenMath.js';
import { decodePaymasterAndData, type UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import {
  buildDeployingOp,
  COUNTER_ADDRESS,
  KEYS,
  mintToken,
  type PatronFixture,
  setFeeReceiver,
  signAccount,
  simpleAccountAbi,
  simpleAccountFactoryAbi,
  submitHandleOps,
  tokenBalance,
} from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { type Tenant, type TestContext, WEBHOOK_PATH, webhookHeaders } from './helpers/testContext.js';
import { answer, type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The token mode through the paymaster URL on the in-process chain: quotes from the dev tokens' fixed prices
 * (ETH 3000 USD; USDC 1 USD +10 %; PDT 0.25 USD), then the final data submitted with handleOps.
 */
let app: RpcFixture;
let fx: PatronFixture;
let ctx: TestContext;
let tenant: Tenant;
let usdc: DevTokenInfo;
let pdt: DevTokenInfo;
const feeReceiver = getAddress('0x0000000000000000000000000000000000feefee');

before(async () => {
  // Its flows batch their approval (mode 2): the dApp guarantees them.
  app = await startRpcFixture({ tokens: true, tokenGuarantees: true });
  ({ fx, ctx, tenant } = app);
  [usdc, pdt] = fx.tokens as [DevTokenInfo, DevTokenInfo];
  await setFeeReceiver(fx, feeReceiver);
});
after(() => app.close());

const rpc = (method: string, params: unknown[]) => app.rpc(method, params);

function wire(op: UserOperationV06, withGas = true) {
  return {
    sender: op.sender,
    nonce: `0x${op.nonce.toString(16)}`,
    initCode: op.initCode,
    callData: op.callData,
    maxFeePerGas: op.maxFeePerGas.toString(),
    maxPriorityFeePerGas: op.maxPriorityFeePerGas.toString(),
    ...(withGas
      ? {
          callGasLimit: op.callGasLimit.toString(),
          verificationGasLimit: op.verificationGasLimit.toString(),
          preVerificationGas: op.preVerificationGas.toString(),
        }
      : {}),
    signature: '0x',
  };
}

interface Quote {
  symbol: string;
  decimal: number;
  tokenAddress: Address;
  maxGasFee: number;
  maxGasFeeUSD: number;
  exchangeRate: number | string;
  premiumPercentage: number;
  validUntil: number;
  logoUrl: string;
}

const mint = (token: Address, to: Address, amount: bigint) => mintToken(fx, token, to, amount);
const balanceOf = (token: Address, who: Address) => tokenBalance(fx, token, who);

/** What @biconomy/account does with a quote: approve ceil(maxGasFee × 10^decimal), batched before the call. */
function withApproval(op: UserOperationV06, quote: Quote): { op: UserOperationV06; approved: bigint } {
  const approved = BigInt(Math.ceil(quote.maxGasFee * 10 ** quote.decimal));
  const approve = encodeFunctionData({ abi: devTokenAbi, functionName: 'approve', args: [fx.paymaster, approved] });
  const callData = encodeFunctionData({
    abi: simpleAccountAbi,
    functionName: 'executeBatch',
    args: [
      [quote.tokenAddress, COUNTER_ADDRESS],
      [approve, '0x'],
    ],
  });
  return { op: { ...op, callData }, approved };
}

describe('ERC20 quotes (pm_getFeeQuoteOrData)', () => {
  test('every supported token when the list is empty, with the documented field types and arithmetic', async () => {
    const op = await buildDeployingOp(fx, 100n);
    const { status, body } = await rpc('pm_getFeeQuoteOrData', [
      wire(op),
      { mode: 'ERC20', calculateGasLimits: false, tokenInfo: { tokenList: [] } },
    ]);
    assert.equal(status, 200, JSON.stringify(body));
    const r = body.result ?? {};
    assert.equal(r.mode, 'ERC20');
    assert.equal(r.MODE, 'ERC20');
    assert.equal(r.paymasterAddress, fx.paymaster);
    assert.deepEqual(r.unsupportedTokens, []);
    const quotes = r.feeQuotes as Quote[];
    assert.deepEqual(
      quotes.map((q) => [q.symbol, q.decimal, q.tokenAddress]),
      [
        ['USDC', 6, usdc.address],
        ['PDT', 18, pdt.address],
      ],
    );
    const [q] = quotes as [Quote];
    // 3000 USD per ETH at 1 USD per USDC: 3000e6 base units per 1e18 wei; 10 % premium.
    assert.equal(q.exchangeRate, 3_000_000_000);
    assert.equal(q.premiumPercentage, 10);
    assert.equal(q.logoUrl, '');
    assert.ok(
      Number.isInteger(q.validUntil) && q.validUntil > Date.now() / 1000 && q.validUntil < Date.now() / 1000 + 400,
    );
    // maxGas = (cgl + 50,000 approval headroom) + 3 × max(vgl + 50,000, 100,000) + (pvg + 6,000) + 50,000 postOp.
    const vgl = op.verificationGasLimit + 50_000n > 100_000n ? op.verificationGasLimit + 50_000n : 100_000n;
    const maxGas = op.callGasLimit + 50_000n + 3n * vgl + op.preVerificationGas + 6_000n + 50_000n;
    const units = (maxGas * op.maxFeePerGas * 3_000_000_000n * 1_100_000n + 10n ** 24n - 1n) / 10n ** 24n;
    assert.equal(BigInt(Math.ceil(q.maxGasFee * 1e6)), units);
    assert.ok(Math.abs(q.maxGasFeeUSD - Number(units) / 1e6) < 1e-6);
    const [, p] = quotes as [Quote, Quote];
    assert.equal(p.exchangeRate, '12000000000000000000000', 'beyond 2^53 the rate is an exact decimal string');
  });

  test('preferredToken first, tokenList deduplicated across letter case, unknown tokens listed as sent', async () => {
    const unknown = '0x000000000000000000000000000000000000dEaD';
    const { body } = await rpc('pm_getFeeQuoteOrData', [
      wire(await buildDeployingOp(fx, 101n)),
      {
        mode: 'erc20',
        calculateGasLimits: false,
        tokenInfo: {
          preferredToken: pdt.address.toLowerCase(),
          tokenList: [usdc.address, unknown, pdt.address.toUpperCase().replace('0X', '0x'), usdc.address.toLowerCase()],
        },
      },
    ]);
    const r = body.result ?? {};
    assert.deepEqual(
      (r.feeQuotes as Quote[]).map((q) => q.symbol),
      ['PDT', 'USDC'],
    );
    assert.deepEqual(r.unsupportedTokens, [unknown]);
  });

  test('preferredToken with an empty tokenList: every token, the preferred one first (what the SDK reads)', async () => {
    const { body } = await rpc('pm_getFeeQuoteOrData', [
      wire(await buildDeployingOp(fx, 104n)),
      { mode: 'ERC20', calculateGasLimits: false, tokenInfo: { tokenList: [], preferredToken: pdt.address } },
    ]);
    assert.deepEqual(
      ((body.result?.feeQuotes ?? []) as Quote[]).map((q) => q.symbol),
      ['PDT', 'USDC'],
    );
  });

  test('computes gas limits by simulation when they are missing (no token balance needed to see a quote)', async () => {
    const { status, body } = await rpc('pm_getFeeQuoteOrData', [
      wire(await buildDeployingOp(fx, 102n), false),
      { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { preferredToken: usdc.address } },
    ]);
    assert.equal(status, 200, JSON.stringify(body));
    const [q] = (body.result?.feeQuotes ?? []) as Quote[];
    assert.ok(q !== undefined && q.maxGasFee > 0);
  });

  test('bad tokenInfo is a -32602 naming the field', async () => {
    const { status, body } = await rpc('pm_getFeeQuoteOrData', [
      wire(await buildDeployingOp(fx, 103n)),
      { mode: 'ERC20', tokenInfo: { tokenList: ['0x1234'] } },
    ]);
    assert.equal(status, 400);
    assert.equal(body.error?.code, -32602);
    assert.match(body.error?.message ?? '', /params\[1\]\.tokenInfo\.tokenList\[0\]: must be a token address/);
  });

  test('a quote without maxFeePerGas is a -32602 naming params[0].maxFeePerGas', async () => {
    const op = { ...wire(await buildDeployingOp(fx, 104n)), maxFeePerGas: '0x0' };
    const { status, body } = await rpc('pm_getFeeQuoteOrData', [op, { mode: 'ERC20' }]);
    assert.equal(status, 400);
    assert.equal(body.error?.code, -32602);
    assert.equal(body.error?.message, 'Invalid params: params[0].maxFeePerGas: must be set to quote a fee in tokens');
  });
});

describe('ERC20 final data (pm_sponsorUserOperation) accepted by the EntryPoint', () => {
  for (const which of ['USDC', 'PDT'] as const) {
    test(`${which}: quote → approve maxGasFee in the batch → final data → handleOps charges ≤ the approval`, async () => {
      const token = which === 'USDC' ? usdc : pdt;
      const plain = await buildDeployingOp(fx, which === 'USDC' ? 110n : 111n);
      const quoted = await rpc('pm_getFeeQuoteOrData', [
        wire(plain, false),
        { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { preferredToken: token.address } },
      ]);
      const quote = (quoted.body.result?.feeQuotes as Quote[] | undefined)?.[0];
      assert.ok(quote !== undefined, JSON.stringify(quoted.body));
      const { op, approved } = withApproval(plain, quote);
      await mint(token.address, op.sender, approved * 2n);
      const { status, body } = await rpc('pm_sponsorUserOperation', [
        wire(op, false),
        { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { feeTokenAddress: token.address } },
      ]);
      assert.equal(status, 200, JSON.stringify(body));
      const r = body.result ?? {};
      assert.equal(r.mode, 'ERC20');
      const data = decodePaymasterAndData(r.paymasterAndData as Hex);
      assert.ok(data.mode === 1 && data.token === token.address);
      assert.ok(data.maxTokenCost <= approved, 'the signed maximum never exceeds what the user approved');
      const final = await signAccount(fx, {
        ...op,
        paymasterAndData: r.paymasterAndData as Hex,
        callGasLimit: BigInt(r.callGasLimit as number),
        verificationGasLimit: BigInt(r.verificationGasLimit as number),
        preVerificationGas: BigInt(r.preVerificationGas as string),
      });
      const before = await balanceOf(token.address, feeReceiver);
      const { receipt, events } = await submitHandleOps(fx, [final]);
      assert.equal(receipt.status, 'success');
      const [event] = events;
      assert.equal(event?.args.success, true);
      const [charged] = parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenCharged', logs: receipt.logs });
      assert.ok(charged !== undefined);
      const gained = (await balanceOf(token.address, feeReceiver)) - before;
      assert.equal(gained, charged.args.charge);
      assert.ok(gained > 0n && gained <= approved, `charged ${gained} ≤ approved ${approved}`);
    });
  }

  test('an allowance given before the op (no approval in it) is used: the cap is the formula, handleOps succeeds', async () => {
    // An account that already exists (approving from its address first would burn the CREATE2 slot: AA13).
    const deploying = await buildDeployingOp(fx, 112n);
    const createHash = await fx.client.writeContract({
      address: fx.simpleAccountFactory,
      abi: simpleAccountFactoryAbi,
      functionName: 'createAccount',
      args: [privateKeyToAddress(KEYS.accountOwner), 112n],
    });
    await fx.client.waitForTransactionReceipt({ hash: createHash });
    const op: UserOperationV06 = { ...deploying, initCode: '0x' };
    await mint(usdc.address, op.sender, 10n ** 9n);
    // Without the allowance the charge cannot be collected: refused before signing.
    const refused = await rpc('pm_sponsorUserOperation', [
      wire(op, false),
      { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { feeTokenAddress: usdc.address } },
    ]);
    assert.equal(refused.body.error?.code, -32020);
    await fx.client.impersonateAccount({ address: op.sender });
    await fx.client.setBalance({ address: op.sender, value: 10n ** 18n });
    const approveHash = await fx.client.writeContract({
      account: op.sender,
      address: usdc.address,
      abi: devTokenAbi,
      functionName: 'approve',
      args: [fx.paymaster, 10n ** 9n],
    });
    await fx.client.waitForTransactionReceipt({ hash: approveHash });
    await fx.client.stopImpersonatingAccount({ address: op.sender });
    await fx.client.setBalance({ address: op.sender, value: 0n });
    const { status, body } = await rpc('pm_sponsorUserOperation', [
      wire(op, false),
      { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { feeTokenAddress: usdc.address } },
    ]);
    assert.equal(status, 200, JSON.stringify(body));
    const r = body.result ?? {};
    const data = decodePaymasterAndData(r.paymasterAndData as Hex);
    const limits = {
      callGasLimit: BigInt(r.callGasLimit as number),
      verificationGasLimit: BigInt(r.verificationGasLimit as number),
      preVerificationGas: BigInt(r.preVerificationGas as string),
    };
    assert.ok(data.mode === 1);
    assert.equal(
      data.maxTokenCost,
      maxTokenCostV06(limits, op.maxFeePerGas, { exchangeRate: data.exchangeRate, priceMarkup: data.priceMarkup }),
    );
    const final = await signAccount(fx, { ...op, ...limits, paymasterAndData: r.paymasterAndData as Hex });
    const [event] = (await submitHandleOps(fx, [final])).events;
    assert.equal(event?.args.success, true);
  });

  test('an account without the token is refused before signing, with the reason', async () => {
    const plain = await buildDeployingOp(fx, 120n);
    const { op } = withApproval(plain, {
      tokenAddress: usdc.address,
      maxGasFee: 100,
      decimal: 6,
    } as Quote);
    const { status, body } = await rpc('pm_sponsorUserOperation', [
      wire(op, false),
      { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { feeTokenAddress: usdc.address } },
    ]);
    assert.equal(status, 400);
    assert.equal(body.error?.code, -32020);
    assert.match(body.error?.message ?? '', /token balance below the maximum charge/);
  });

  test('a balance below the maximum charge is -32021, before anything is signed', async () => {
    const plain = await buildDeployingOp(fx, 123n);
    const { op } = withApproval(plain, { tokenAddress: usdc.address, maxGasFee: 100, decimal: 6 } as Quote);
    await mint(usdc.address, op.sender, 1000n);
    const { status, body } = await rpc('pm_sponsorUserOperation', [
      wire(op, false),
      { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { feeTokenAddress: usdc.address } },
    ]);
    assert.equal(status, 400);
    assert.equal(body.error?.code, -32021);
    assert.match(
      body.error?.message ?? '',
      /^The account holds 1000 base units of USDC, below the maximum charge of \d+$/,
    );
  });

  test('an approval of the wrong token is refused (the simulated charge fails)', async () => {
    const plain = await buildDeployingOp(fx, 121n);
    const { op } = withApproval(plain, { tokenAddress: pdt.address, maxGasFee: 1000, decimal: 18 } as Quote);
    await mint(usdc.address, op.sender, 10n ** 12n);
    const { status, body } = await rpc('pm_sponsorUserOperation', [
      wire(op, false),
      { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { feeTokenAddress: usdc.address } },
    ]);
    assert.equal(status, 400);
    assert.equal(body.error?.code, -32020);
    assert.match(body.error?.message ?? '', /charge of this operation could not be collected/);
  });

  test('a fee token the chain does not accept is -32030; a missing feeTokenAddress is -32602', async () => {
    const op = wire(await buildDeployingOp(fx, 122n));
    const unknown = await rpc('pm_sponsorUserOperation', [
      op,
      { mode: 'ERC20', tokenInfo: { feeTokenAddress: '0x000000000000000000000000000000000000dEaD' } },
    ]);
    assert.equal(unknown.body.error?.code, -32030);
    assert.match(unknown.body.error?.message ?? '', /not supported on this chain/);
    const missing = await rpc('pm_sponsorUserOperation', [op, { mode: 'ERC20', tokenInfo: {} }]);
    assert.equal(missing.body.error?.code, -32602);
  });
});

describe('ERC-7677 in ERC20 mode', () => {
  test('the stub has the final length (154 bytes) and the data is accepted by the EntryPoint', async () => {
    const plain = await buildDeployingOp(fx, 140n);
    const { op, approved } = withApproval(plain, { tokenAddress: usdc.address, maxGasFee: 50, decimal: 6 } as Quote);
    await mint(usdc.address, op.sender, approved);
    const context = { mode: 'ERC20', tokenInfo: { feeTokenAddress: usdc.address } };
    const hexOp = {
      ...wire(op),
      nonce: `0x${op.nonce.toString(16)}`,
      callGasLimit: `0x${(200_000n).toString(16)}`,
      verificationGasLimit: `0x${(700_000n).toString(16)}`,
      preVerificationGas: `0x${(55_000n).toString(16)}`,
    };
    const stub = await rpc('pm_getPaymasterStubData', [hexOp, fx.entryPoint, '0x7a69', context]);
    assert.equal(stub.status, 200, JSON.stringify(stub.body));
    assert.equal(hexToBytes(stub.body.result?.paymasterAndData as Hex).length, 154);
    const data = await rpc('pm_getPaymasterData', [hexOp, fx.entryPoint, '0x7a69', context]);
    assert.equal(data.status, 200, JSON.stringify(data.body));
    const final = await signAccount(fx, {
      ...op,
      callGasLimit: 200_000n,
      verificationGasLimit: 700_000n,
      preVerificationGas: 55_000n,
      paymasterAndData: data.body.result?.paymasterAndData as Hex,
    });
    const [event] = (await submitHandleOps(fx, [final])).events;
    assert.equal(event?.args.success, true);
  });
});

describe('mode absent: sponsorship first, then ERC20 quotes', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver(answer({ arePoliciesVerified: false }));
    const res = await ctx.app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: webhookHeaders(tenant),
      payload: { webhookUrl: receiver.url('/no'), requestType: 'POST' },
    });
    assert.equal(res.statusCode, 200);
  });
  after(async () => {
    await receiver.close();
  });

  test('a dApp whose webhook refuses gets token quotes instead of the denial', async () => {
    const { status, body } = await rpc('pm_getFeeQuoteOrData', [
      wire(await buildDeployingOp(fx, 130n)),
      { calculateGasLimits: false, tokenInfo: { tokenList: [] } },
    ]);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.result?.mode, 'ERC20');
    assert.equal(((body.result?.feeQuotes ?? []) as Quote[]).length, 2);
    const sponsored = await rpc('pm_getFeeQuoteOrData', [
      wire(await buildDeployingOp(fx, 131n)),
      { mode: 'SPONSORED' },
    ]);
    assert.equal(sponsored.body.error?.code, -32010, 'an explicit SPONSORED request still gets the denial');
  });
});
