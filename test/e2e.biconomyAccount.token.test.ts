import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as accountSdk from '@biconomy/account';
import {
  type Address,
  decodeFunctionData,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  isAddress,
  parseEventLogs,
} from 'viem';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { decodePaymasterAndData, type UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { type BiconomyPartialOp, biconomyPartialOp, SMART_ACCOUNT_INFO } from './helpers/biconomySponsoredCases.js';
import {
  COUNTER_ADDRESS,
  mintToken,
  setFeeReceiver,
  signAccount,
  simpleAccountAbi,
  submitHandleOps,
  tokenBalance,
} from './helpers/patronPaymasterV06.js';
import {
  accountSdkError,
  applySdkFields,
  assertSponsoredOnChain,
  type SdkSponsoredFields,
  TOKEN_PAYMASTER_AND_DATA_HEX_LENGTH,
  useSdkE2e,
} from './helpers/sdkE2e.js';
import { createTenant, enableTokenGuarantees } from './helpers/testContext.js';

/**
 * `@biconomy/account` 4.x, unmodified, paying gas in an ERC-20 through Patron listening on 127.0.0.1: the
 * paymaster half (`createPaymaster`) asks for quotes, builds the token approval, and gets the final
 * `paymasterAndData`; the op then runs through `handleOps` on the in-process EntryPoint v0.6 and the fee
 * receiver must gain exactly what the paymaster's `TokenCharged` event says, never more than was approved.
 *
 * What the SDK's smart account does between those calls (BiconomySmartAccountV2.buildTokenPaymasterUserOp) is
 * reproduced here: it decodes its own `execute` call and re-encodes `executeBatch` with the approval FIRST.
 * SimpleAccount v0.6 stands in for Biconomy's account here: its `executeBatch(address[] dest, bytes[] func)` takes
 * no values, which loses nothing (the approval's value is 0). The SDK's own smart account, Smart Account v2, pays in
 * the ERC20 mode end to end in e2e.biconomySmartAccountV2.test.ts.
 * The SDK's typings do not resolve under NodeNext (see e2e.biconomyAccount.test.ts): the slice used is typed
 * by hand below and checked at run time by the first test.
 */
type Erc20Mode = 'ERC20';
/** A fee quote as the SDK hands it over (it passes Patron's objects through untouched). */
interface FeeQuote {
  readonly symbol: string;
  readonly tokenAddress: string;
  readonly decimal: number;
  readonly maxGasFee: number;
  readonly maxGasFeeUSD: number;
  readonly exchangeRate: number | string;
  readonly premiumPercentage: number;
  readonly validUntil: number;
  readonly logoUrl: string;
}
interface AccountSdkTokenPaymaster {
  getPaymasterFeeQuotesOrData(
    userOp: BiconomyPartialOp,
    dto: { mode: Erc20Mode; tokenList: string[]; preferredToken: string; calculateGasLimits?: boolean },
  ): Promise<{ feeQuotes?: FeeQuote[]; tokenPaymasterAddress?: string }>;
  buildTokenApprovalTransaction(req: {
    feeQuote: FeeQuote;
    spender: string;
    maxApproval?: boolean;
  }): Promise<{ to: string; value: unknown; data: Hex }>;
  getPaymasterAndData(
    userOp: BiconomyPartialOp,
    dto: { mode: Erc20Mode; feeTokenAddress: string; calculateGasLimits?: boolean },
  ): Promise<SdkSponsoredFields>;
}
interface AccountSdk {
  createPaymaster(config: { paymasterUrl: string }): Promise<AccountSdkTokenPaymaster>;
  readonly PaymasterMode: { readonly ERC20: Erc20Mode };
}
const { createPaymaster, PaymasterMode } = accountSdk as unknown as AccountSdk;

/** Receives the token charges, apart from the paymaster's owner, so its balance change is the charge alone. */
const FEE_RECEIVER = getAddress('0x00000000000000000000000000000000000fee01');

let pm: AccountSdkTokenPaymaster;
/** The SDK on a dApp that left token guarantees off (the default). */
let pmDefault: AccountSdkTokenPaymaster;
const e2e = useSdkE2e({
  errorCatalogue: true,
  async setUp(e2e) {
    await setFeeReceiver(e2e.fx, FEE_RECEIVER);
    // The SDK batches its approval into the op (mode 2): the dApp guarantees those charges, its choice.
    await enableTokenGuarantees(e2e.ctx.deps, e2e.open);
    pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(e2e.open) });
    pmDefault = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(await createTenant(e2e.ctx.deps)) });
  },
});

const devToken = (symbol: string): DevTokenInfo => {
  const t = e2e.fx.tokens.find((x) => x.symbol === symbol);
  assert.ok(t, `the dev chain deployed ${symbol}`);
  return t;
};

const balanceOf = (token: Address, who: Address) => tokenBalance(e2e.fx, token, who);
const mint = (token: Address, to: Address, amount: bigint) => mintToken(e2e.fx, token, to, amount);

/** Quotes for `token` as preferred token, with what went on the wire checked. */
async function quoteFor(op: UserOperationV06, token: DevTokenInfo) {
  const r = await pm.getPaymasterFeeQuotesOrData(biconomyPartialOp(op), {
    mode: PaymasterMode.ERC20,
    tokenList: [],
    preferredToken: token.address,
  });
  const sent = e2e.lastCall();
  assert.equal(sent.method, 'pm_getFeeQuoteOrData');
  assert.equal(sent.status, 200, JSON.stringify(sent.response));
  const feeQuote = r.feeQuotes?.[0];
  assert.ok(feeQuote !== undefined, 'a quote for the preferred token');
  return { r, sent, feeQuote };
}

/**
 * BiconomySmartAccountV2.buildTokenPaymasterUserOp on SimpleAccount: the SDK's approval transaction first,
 * then the op's own call (decoded from its `execute`), as one `executeBatch`.
 */
async function withSdkApproval(op: UserOperationV06, feeQuote: FeeQuote, spender: string, maxApproval = false) {
  const approval = await pm.buildTokenApprovalTransaction({ feeQuote, spender, maxApproval });
  const own = decodeFunctionData({ abi: simpleAccountAbi, data: op.callData });
  assert.equal(own.functionName, 'execute');
  const [dest, , func] = own.args as readonly [Address, bigint, Hex];
  const callData = encodeFunctionData({
    abi: simpleAccountAbi,
    functionName: 'executeBatch',
    args: [
      [getAddress(approval.to), dest],
      [approval.data, func],
    ],
  });
  return { approval, op: { ...op, callData } };
}

/**
 * The SDK's final-data call, refused: what it threw, and the JSON-RPC error Patron answered with HTTP 400 (what this
 * SDK needs to read the reason at all).
 */
async function refusedFinalData(sdk: AccountSdkTokenPaymaster, op: UserOperationV06, token: Address) {
  let thrown: unknown;
  await assert.rejects(
    sdk.getPaymasterAndData(biconomyPartialOp(op), {
      mode: PaymasterMode.ERC20,
      feeTokenAddress: token,
      calculateGasLimits: true,
    }),
    (err: unknown) => {
      thrown = err;
      return err instanceof Error;
    },
  );
  const sent = e2e.lastCall();
  assert.equal(sent.status, 400, 'a deterministic refusal: HTTP 400, which this SDK needs to read the reason');
  const error = (sent.response as { error?: { code?: unknown; message?: unknown; data?: unknown } }).error;
  return { thrown, error, message: String(error?.message) };
}

describe('@biconomy/account 4.x createPaymaster, ERC20 mode', () => {
  test('quotes: the SDK’s answer shape, the preferred token first, and the quote fields as sent', async () => {
    assert.equal(PaymasterMode.ERC20, 'ERC20');
    assert.equal(typeof pm.buildTokenApprovalTransaction, 'function');
    const usdc = devToken('USDC');
    const pdt = devToken('PDT');
    const { r, sent, feeQuote } = await quoteFor(await e2e.nextOp(), pdt);

    // The SDK keeps exactly two fields of Patron's ERC20 result, renaming paymasterAddress.
    assert.deepEqual(Object.keys(r).sort(), ['feeQuotes', 'tokenPaymasterAddress']);
    assert.equal(r.tokenPaymasterAddress, e2e.fx.paymaster);
    assert.equal(feeQuote.tokenAddress, pdt.address, 'feeQuotes[0] is the preferred token');
    // The SDK sends `tokenList: []`, which Patron reads as every token of the chain after the preferred one
    // (docs/guides/token-mode.md, "Quotes"); any further quote is the other dev token.
    const quoted = r.feeQuotes?.map((q) => q.tokenAddress) ?? [];
    assert.deepEqual(new Set(quoted).size, quoted.length, 'no token quoted twice');
    assert.ok(quoted.every((a) => a === pdt.address || a === usdc.address));

    // `tokenList: []` is sent as is (the SDK keeps an empty list), preferredToken beside it.
    assert.deepEqual(sent.params[1], {
      mode: 'ERC20',
      calculateGasLimits: true,
      tokenInfo: { tokenList: [], preferredToken: pdt.address },
      sponsorshipInfo: { smartAccountInfo: SMART_ACCOUNT_INFO },
    });
    const result = (sent.response as { result?: Record<string, unknown> }).result ?? {};
    assert.equal(result.mode, 'ERC20', 'the SDK reads the lower-case mode');
    assert.equal(result.MODE, 'ERC20');
    assert.deepEqual(result.unsupportedTokens, []);
    assert.deepEqual(result.feeQuotes, r.feeQuotes, 'the SDK passes the quotes through untouched');

    const now = Date.now() / 1000;
    // Both dev tokens' quotes (6 and 18 decimals: PDT's exchange rate is beyond 2^53), asked for by tokenList.
    const both = await pm.getPaymasterFeeQuotesOrData(biconomyPartialOp(await e2e.nextOp()), {
      mode: PaymasterMode.ERC20,
      tokenList: [usdc.address, pdt.address],
      preferredToken: pdt.address,
    });
    assert.deepEqual(
      both.feeQuotes?.map((q) => q.symbol),
      ['PDT', 'USDC'],
      'preferredToken first, then tokenList, each once',
    );
    const bothSent = (e2e.lastCall().response as { result?: { feeQuotes?: unknown } }).result;
    assert.deepEqual(bothSent?.feeQuotes, both.feeQuotes, 'as on the wire');
    for (const [q, token] of [
      [both.feeQuotes?.[0], pdt],
      [both.feeQuotes?.[1], usdc],
    ] as const) {
      assert.ok(q !== undefined);
      assert.equal(q.symbol, token.symbol);
      assert.ok(isAddress(q.tokenAddress, { strict: true }) && q.tokenAddress === token.address);
      assert.ok(Number.isInteger(q.decimal) && q.decimal === token.decimals, 'decimal: an integer number');
      assert.ok(typeof q.maxGasFee === 'number' && Number.isFinite(q.maxGasFee) && q.maxGasFee > 0);
      assert.ok(typeof q.maxGasFeeUSD === 'number' && q.maxGasFeeUSD > 0);
      assert.equal(typeof q.premiumPercentage, 'number');
      assert.ok(
        (typeof q.exchangeRate === 'number' && Number.isSafeInteger(q.exchangeRate)) ||
          (typeof q.exchangeRate === 'string' && /^\d+$/.test(q.exchangeRate)),
        `exchangeRate ${JSON.stringify(q.exchangeRate)}: an integer, as a string beyond 2^53`,
      );
      assert.ok(Number.isInteger(q.validUntil) && q.validUntil > now && q.validUntil < now + 3600, 'unix seconds');
      assert.equal(typeof q.logoUrl, 'string');
    }
  });

  for (const symbol of ['USDC', 'PDT'] as const) {
    test(`${symbol}: quote → SDK approval batched first → getPaymasterAndData → handleOps charges ≤ the approval`, async () => {
      const token = devToken(symbol);
      const plain = await e2e.nextOp();
      const { r, feeQuote } = await quoteFor(plain, token);
      assert.equal(feeQuote.tokenAddress, token.address);
      const spender = r.tokenPaymasterAddress;
      assert.ok(spender !== undefined);

      const { approval, op } = await withSdkApproval(plain, feeQuote, spender);
      assert.equal(approval.to, token.address);
      const approve = decodeFunctionData({ abi: erc20Abi, data: approval.data });
      assert.equal(approve.functionName, 'approve');
      const [approvedSpender, approved] = approve.args as readonly [Address, bigint];
      assert.equal(approvedSpender, e2e.fx.paymaster);
      assert.equal(approved, BigInt(Math.ceil(feeQuote.maxGasFee * 10 ** feeQuote.decimal)));
      // The account holds exactly what it approves: the signed maximum must fit in it.
      await mint(token.address, op.sender, approved);

      const final = await pm.getPaymasterAndData(biconomyPartialOp(op), {
        mode: PaymasterMode.ERC20,
        feeTokenAddress: token.address,
        calculateGasLimits: true,
      });
      const sent = e2e.lastCall();
      assert.equal(sent.method, 'pm_sponsorUserOperation');
      assert.equal(sent.status, 200, JSON.stringify(sent.response));
      assert.deepEqual(sent.params[1], {
        mode: 'ERC20',
        calculateGasLimits: true,
        tokenInfo: { feeTokenAddress: token.address },
        sponsorshipInfo: { smartAccountInfo: SMART_ACCOUNT_INFO },
      });
      assert.equal(sent.userOp.callData, op.callData, 'the batched call data went to Patron');

      const ready = applySdkFields(op, final, TOKEN_PAYMASTER_AND_DATA_HEX_LENGTH);
      const data = decodePaymasterAndData(ready.paymasterAndData);
      assert.ok(data.mode === 1, 'token mode');
      assert.equal(data.token, token.address);
      assert.equal(data.paymaster, e2e.fx.paymaster);
      assert.ok(data.maxTokenCost <= approved, `signed maximum ${data.maxTokenCost} ≤ approved ${approved}`);

      const receiverBefore = await balanceOf(token.address, FEE_RECEIVER);
      const { logs } = await assertSponsoredOnChain(e2e.fx, ready);
      const charges = parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenCharged', logs: [...logs] });
      assert.equal(charges.length, 1, 'one TokenCharged');
      const [charged] = charges;
      assert.ok(charged !== undefined);
      assert.equal(charged.args.account, op.sender);
      assert.equal(charged.args.token, token.address);
      const { charge } = charged.args;
      assert.equal(
        (await balanceOf(token.address, FEE_RECEIVER)) - receiverBefore,
        charge,
        'receiver gained the charge',
      );
      assert.ok(charge > 0n && charge <= data.maxTokenCost && charge <= approved, `charge ${charge} ≤ ${approved}`);
      assert.equal(await balanceOf(token.address, op.sender), approved - charge, 'the account paid the charge only');
    });
  }

  test('two ops: the first batches the SDK’s unlimited approval (mode 2); the second, its allowance on chain, is mode 1 with prefund, refund and charge', async (t) => {
    const usdc = devToken('USDC');
    const first = await e2e.nextOp();
    await mint(usdc.address, first.sender, 100n * 10n ** 6n);
    /** Quote → the SDK's approval batched first → getPaymasterAndData, as the SDK's account does it. */
    const paid = async (plain: UserOperationV06, maxApproval: boolean) => {
      const { r, feeQuote } = await quoteFor(plain, usdc);
      const { op } = await withSdkApproval(plain, feeQuote, String(r.tokenPaymasterAddress), maxApproval);
      const final = await pm.getPaymasterAndData(biconomyPartialOp(op), {
        mode: PaymasterMode.ERC20,
        feeTokenAddress: usdc.address,
        calculateGasLimits: true,
      });
      const ready = applySdkFields(op, final, TOKEN_PAYMASTER_AND_DATA_HEX_LENGTH);
      const data = decodePaymasterAndData(ready.paymasterAndData);
      assert.ok(data.mode === 1, 'token mode');
      return { ready, data };
    };

    // First op: no allowance on chain; the SDK's maxApproval batched, so Patron signs mode 2.
    const one = await paid(first, true);
    assert.equal(one.data.guaranteed, true, 'mode 2');
    await assertSponsoredOnChain(e2e.fx, one.ready);
    assert.equal(
      await e2e.fx.client.readContract({
        address: usdc.address,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [first.sender, e2e.fx.paymaster],
      }),
      2n ** 256n - 1n,
      'the unlimited allowance is on chain',
    );

    // Second op of the same account: the SDK batches its (exact) approval again; the allowance already covers the
    // maximum, so Patron signs mode 1 and the paymaster takes the maximum in validation.
    const next: UserOperationV06 = {
      ...first,
      nonce: first.nonce + 1n,
      initCode: '0x',
      callData: encodeFunctionData({
        abi: simpleAccountAbi,
        functionName: 'execute',
        args: [COUNTER_ADDRESS, 0n, '0x'],
      }),
    };
    const two = await paid(next, false);
    assert.equal(two.data.guaranteed, undefined, 'mode 1');
    const before = await balanceOf(usdc.address, first.sender);
    const receiverBefore = await balanceOf(usdc.address, FEE_RECEIVER);
    const { receipt, events } = await submitHandleOps(e2e.fx, [await signAccount(e2e.fx, two.ready)]);
    assert.equal(events[0]?.args.success, true, 'executed');
    const [charged] = parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenCharged', logs: receipt.logs });
    assert.ok(charged !== undefined);
    const { charge } = charged.args;
    const moves = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs })
      .filter((l) => getAddress(l.address) === usdc.address)
      .map((l) => [getAddress(l.args.from), getAddress(l.args.to), l.args.value]);
    const [sender, paymaster] = [getAddress(first.sender), e2e.fx.paymaster];
    assert.deepEqual(moves, [
      [sender, paymaster, two.data.maxTokenCost],
      [paymaster, sender, two.data.maxTokenCost - charge],
      [paymaster, FEE_RECEIVER, charge],
    ]);
    assert.equal(await balanceOf(usdc.address, first.sender), before - charge, 'the account paid the charge only');
    assert.equal((await balanceOf(usdc.address, FEE_RECEIVER)) - receiverBefore, charge);
    t.diagnostic(
      `mode 1: prefund ${two.data.maxTokenCost}, refund ${two.data.maxTokenCost - charge}, charge ${charge}`,
    );
  });

  test('an account holding none of the token: the SDK throws with Patron’s reason inside, nothing is signed', async () => {
    const usdc = devToken('USDC');
    const plain = await e2e.nextOp();
    const { r, feeQuote } = await quoteFor(plain, usdc);
    const { op } = await withSdkApproval(plain, feeQuote, String(r.tokenPaymasterAddress));
    assert.equal(await balanceOf(usdc.address, op.sender), 0n);
    const catalogueFetches = e2e.catalogue.fetches();

    const { thrown, error, message } = await refusedFinalData(pm, op, usdc.address);
    assert.equal(error?.code, -32020);
    assert.match(message, /token balance below the maximum charge/);
    assert.ok(thrown instanceof Error);
    assert.ok(thrown.message.includes(JSON.stringify(`Error coming from Paymaster: ${message}`)), thrown.message);
    assert.equal(thrown.message, accountSdkError(message));
    assert.equal(e2e.catalogue.fetches(), catalogueFetches + 1, 'the SDK fetched its error catalogue to word it');
  });

  test('a dApp with token guarantees off (the default): the quote is served, the batched approval refused with Patron’s reason (-32021), nothing signed', async () => {
    const usdc = devToken('USDC');
    const plain = await e2e.nextOp();
    const r = await pmDefault.getPaymasterFeeQuotesOrData(biconomyPartialOp(plain), {
      mode: PaymasterMode.ERC20,
      tokenList: [],
      preferredToken: usdc.address,
    });
    const feeQuote = r.feeQuotes?.[0];
    assert.ok(feeQuote !== undefined, 'the quote does not depend on the setting: it signs nothing');
    const { op } = await withSdkApproval(plain, feeQuote, String(r.tokenPaymasterAddress));
    await mint(usdc.address, op.sender, 100_000_000n);
    const { thrown, error, message } = await refusedFinalData(pmDefault, op, usdc.address);
    assert.equal(error?.code, -32021);
    assert.deepEqual(error?.data, { rule: 'guaranteeOff', paymaster: getAddress(String(r.tokenPaymasterAddress)) });
    assert.match(message, /batches its USDC approval.*this dApp has token guarantees off \(the default\)/);
    assert.match(message, /approve the paymaster 0x[0-9a-fA-F]{40} for USDC before the operation/);
    assert.ok(thrown instanceof Error && thrown.message.includes(message.slice(0, 60)), String(thrown));
  });
});
