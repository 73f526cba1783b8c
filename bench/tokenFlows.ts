import { createBicoPaymasterClient } from '@biconomy/abstractjs';
import { prepareUserOperationForErc20Paymaster } from 'permissionless/experimental/pimlico';
import { type Address, encodeFunctionData, erc20Abi, getAddress, maxUint256 } from 'viem';
import { toBiconomyTokenPaymasterContext } from '../test/helpers/abstractjsTokenContext.js';
import { mintToken } from '../test/helpers/patronPaymasterV06.js';
import { bicoBundlerClient, smartAccountClient } from '../test/helpers/sdkClientsV07.js';
import type { SdkE2eV07 } from '../test/helpers/sdkE2eV07.js';
import {
  biconomyAccountFor,
  counterCall,
  paymasterUrlFor,
  pimlicoClientFor,
  receiptPolling,
  type SdkFlow,
  sendBiconomyOp,
  sendsCounterCall,
  simpleAccount,
} from './sdkFlow.js';

/**
 * The SDKs' ERC-20 flows (see sdkFlow.ts), as test/e2e.sdkV07.token.test.ts and e2e.biconomySmartAccountV2 drive
 * them: each account holds 1,000 dev USDC and pays every op's gas in it.
 */
const USDC_GRANT = 1_000_000_000n;

function usdcOf(x: SdkE2eV07): Address {
  const usdc = x.fx.tokens.find((t) => t.symbol === 'USDC');
  if (usdc === undefined) throw new Error('the dev chain has no USDC');
  return usdc.address;
}

/** A v0.7 SimpleAccount holding the grant of USDC. */
async function fundedSimpleAccount(x: SdkE2eV07, label: string) {
  const token = usdcOf(x);
  const account = await simpleAccount(x, '0.7', label);
  await mintToken(x.fx, token, account.address, USDC_GRANT);
  return { token, account };
}

const approve = (token: Address, spender: Address, amount: bigint) => ({
  to: token,
  data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] }),
});

/**
 * permissionless: its Pimlico client on Patron's URL as the paymaster, prepareUserOperationForErc20Paymaster and
 * `paymasterContext: { token }`: pimlico_getTokenQuotes, the `{ token }` stub, alto's estimate, pm_getPaymasterData.
 */
const permissionlessErc20: SdkFlow = {
  name: 'permissionless ERC-20 (prepareUserOperationForErc20Paymaster)',
  version: '0.7',
  async start({ x }) {
    const { token, account } = await fundedSimpleAccount(x, 'permissionless-erc20');
    const pimlico = pimlicoClientFor(x, '0.7');
    const options = {
      paymasterContext: { token },
      prepareUserOperation: prepareUserOperationForErc20Paymaster(pimlico),
    };
    return sendsCounterCall(smartAccountClient(x, account, pimlico, options));
  },
};

/**
 * @biconomy/abstractjs: Biconomy's own preparation (prepareUserOperation behind an unlimited approval, which asks
 * pm_getPaymasterData for an op it never sends), getTokenPaymasterQuotes, then the op approving the quote through
 * createBicoBundlerClient with the ERC20 context (`expiryDuration: 6000`).
 */
const abstractjsErc20: SdkFlow = {
  name: '@biconomy/abstractjs ERC-20 (getTokenPaymasterQuotes, ERC20 context)',
  version: '0.7',
  async start({ x }) {
    const { token, account } = await fundedSimpleAccount(x, 'abstractjs-erc20');
    const paymaster = createBicoPaymasterClient({ paymasterUrl: paymasterUrlFor(x, '0.7') });
    const context = toBiconomyTokenPaymasterContext({ feeTokenAddress: token });
    const bundler = bicoBundlerClient(x, account, paymaster, context);
    return async () => {
      const prepared = await bundler.prepareUserOperation({
        calls: [approve(token, x.paymaster('0.7'), maxUint256), counterCall],
      });
      const quotes = await paymaster.getTokenPaymasterQuotes({ userOp: prepared, tokenList: [token] });
      const [quote] = quotes.feeQuotes;
      if (quote === undefined) throw new Error(`no quote: ${JSON.stringify(quotes)}`);
      const amount = BigInt(Math.ceil(quote.maxGasFee * 10 ** quote.decimal));
      const userOpHash = await bundler.sendUserOperation({
        calls: [approve(token, getAddress(quotes.paymasterAddress), amount), counterCall],
      });
      const { receipt } = await bundler.waitForUserOperationReceipt({ hash: userOpHash, ...receiptPolling });
      return { userOpHash, txHash: receipt.transactionHash };
    };
  },
};

/** @biconomy/account 4.x: getTokenFees (pm_getFeeQuoteOrData) → buildUserOp with the quote → sendUserOp → wait. */
const biconomyAccountErc20: SdkFlow = {
  name: '@biconomy/account ERC20 (getTokenFees → buildUserOp), Smart Account v2',
  version: '0.6',
  async start(ctx) {
    const token = usdcOf(ctx.x);
    const { account, address } = await biconomyAccountFor(ctx, 'erc20');
    await mintToken(ctx.x.fx, token, address, USDC_GRANT);
    return async () => {
      const quotes = await account.getTokenFees(counterCall, {
        paymasterServiceData: { mode: 'ERC20', preferredToken: token },
      });
      const feeQuote = quotes.feeQuotes?.[0];
      if (feeQuote === undefined || quotes.tokenPaymasterAddress === undefined) {
        throw new Error(`no quote: ${JSON.stringify(quotes)}`);
      }
      const op = await account.buildUserOp([counterCall], {
        paymasterServiceData: { mode: 'ERC20', feeQuote, spender: quotes.tokenPaymasterAddress },
      });
      return sendBiconomyOp(account, op);
    };
  },
};

export const TOKEN_FLOWS: readonly SdkFlow[] = [permissionlessErc20, abstractjsErc20, biconomyAccountErc20];
