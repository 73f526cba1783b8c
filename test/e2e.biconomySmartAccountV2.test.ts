import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  type Address,
  encodeFunctionData,
  getAddress,
  type Hex,
  parseAbi,
  parseEther,
  parseEventLogs,
  size,
} from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import { BICONOMY_SMART_ACCOUNT_V2 } from '../src/chain/biconomySmartAccountV2.js';
import {
  type AltoBundler,
  type BiconomyBundlerFront,
  startAlto,
  startBiconomyBundlerFront,
} from './helpers/altoBundler.js';
import { biconomySmartAccountFor, biconomyAccountSdk as sdk } from './helpers/biconomySmartAccountV2.js';
import {
  COUNTER_ADDRESS,
  counterValue,
  KEYS,
  mintToken,
  paymasterDeposit,
  setFeeReceiver,
  tokenBalance,
} from './helpers/patronPaymasterV06.js';
import { TOKEN_PAYMASTER_AND_DATA_HEX_LENGTH, useSdkE2e } from './helpers/sdkE2e.js';
import { enableTokenGuarantees } from './helpers/testContext.js';

/**
 * `@biconomy/account` 4.x's own smart-account flow, unmodified, the way a dApp calls it:
 * `createSmartAccountClient({ signer, bundlerUrl, paymasterUrl })` → `buildUserOp` / `getTokenFees` →
 * `sendUserOp` → `wait()`. The account is Biconomy Smart Account v2 (factory, implementation, ECDSA ownership
 * module) that the dev chain installs at the addresses the SDK defaults to; the bundler is alto (a real one)
 * with the SDK's two Biconomy-only bundler calls bridged in front (test/helpers/altoBundler.ts). The SDK signs
 * with `abi.encode(signature, module)`, 192 bytes, which Patron's estimator once swapped for a 65-byte dummy
 * (AA23); here every op executes on chain.
 *
 * The SDK's slice is typed by hand (test/helpers/biconomySmartAccountV2.ts); the first test checks it against the
 * dev chain.
 */
const factoryAbi = parseAbi([
  'function accountCreationCode() pure returns (bytes)',
  'function getAddressForCounterFactualAccount(address moduleSetupContract, bytes moduleSetupData, uint256 index) view returns (address)',
]);
const ecdsaModuleAbi = parseAbi(['function initForSmartAccount(address eoaOwner) returns (address)']);

/** Receives the token charges, apart from the paymaster's owner, so its balance change is the charge alone. */
const FEE_RECEIVER = getAddress('0x00000000000000000000000000000000000fee02');

let alto: AltoBundler;
let front: BiconomyBundlerFront;
const e2e = useSdkE2e({
  errorCatalogue: true,
  async setUp(e2e) {
    await e2e.fx.client.setBalance({ address: privateKeyToAccount(KEYS.alto).address, value: parseEther('100') });
    await setFeeReceiver(e2e.fx, FEE_RECEIVER);
    // The SDK's ERC20 op batches its approval (mode 2): the dApp guarantees that charge, its choice.
    await enableTokenGuarantees(e2e.ctx.deps, e2e.open);
    alto = await startAlto({
      rpcUrl: `${e2e.base}/chain/${e2e.fx.chain.chainId}`,
      entryPoints: [e2e.fx.entryPoint],
      executorKey: KEYS.alto,
    });
    front = await startBiconomyBundlerFront({ alto, chainId: e2e.fx.chain.chainId });
  },
});
after(async () => {
  await front?.close();
  await alto?.close();
});

/** The SDK's client for a fresh owner, on the dev chain as a dApp on `npm start` would configure it. */
function smartAccountFor(label: string) {
  return biconomySmartAccountFor({
    label,
    base: e2e.base,
    chainId: e2e.fx.chain.chainId,
    bundlerUrl: front.url,
    paymasterUrl: e2e.paymasterUrl(e2e.open),
  });
}

const counterCall = { to: COUNTER_ADDRESS, data: '0x' as Hex };
const counter = () => counterValue(e2e.fx);
const deposit = () => paymasterDeposit(e2e.fx);

/** The op's `UserOperationEvent` from the bundle alto sent, checked to be a success paid by Patron's paymaster. */
async function paidByPatron(txHash: Hex, sender: Address) {
  const receipt = await e2e.fx.client.getTransactionReceipt({ hash: txHash });
  assert.equal(receipt.status, 'success');
  const [event, ...more] = parseEventLogs({
    abi: entryPoint06Abi,
    logs: receipt.logs,
    eventName: 'UserOperationEvent',
  });
  assert.ok(event !== undefined && more.length === 0, 'one UserOperationEvent');
  assert.equal(event.args.success, true, 'UserOperationEvent.success');
  assert.equal(getAddress(event.args.sender), sender);
  assert.equal(getAddress(event.args.paymaster), getAddress(e2e.fx.paymaster), 'paid by Patron’s paymaster');
  assert.notEqual(receipt.from.toLowerCase(), e2e.fx.client.account.address.toLowerCase(), 'alto sent the bundle');
  return { receipt, event };
}

describe('@biconomy/account 4.x smart account (Smart Account v2) through Patron and a real bundler', () => {
  test('the dev chain has Smart Account v2 where the SDK looks, and its factory deploys the address the SDK derives', async () => {
    assert.equal(getAddress(sdk.DEFAULT_BICONOMY_FACTORY_ADDRESS), BICONOMY_SMART_ACCOUNT_V2.factory);
    assert.equal(getAddress(sdk.DEFAULT_BICONOMY_IMPLEMENTATION_ADDRESS), BICONOMY_SMART_ACCOUNT_V2.implementation);
    assert.equal(getAddress(sdk.DEFAULT_FALLBACK_HANDLER_ADDRESS), BICONOMY_SMART_ACCOUNT_V2.fallbackHandler);
    assert.equal(getAddress(sdk.DEFAULT_ECDSA_OWNERSHIP_MODULE), BICONOMY_SMART_ACCOUNT_V2.ecdsaOwnershipModule);
    // The proxy the factory creates is byte for byte the one the SDK hashes into every account address.
    const creationCode = await e2e.fx.client.readContract({
      address: BICONOMY_SMART_ACCOUNT_V2.factory,
      abi: factoryAbi,
      functionName: 'accountCreationCode',
    });
    assert.equal(creationCode, sdk.PROXY_CREATION_CODE.toLowerCase());

    const { owner, address } = await smartAccountFor('address');
    const onChain = await e2e.fx.client.readContract({
      address: BICONOMY_SMART_ACCOUNT_V2.factory,
      abi: factoryAbi,
      functionName: 'getAddressForCounterFactualAccount',
      // The ECDSA module's setup call, as the SDK's getInitData builds it for the owner; account index 0.
      args: [
        BICONOMY_SMART_ACCOUNT_V2.ecdsaOwnershipModule,
        encodeFunctionData({ abi: ecdsaModuleAbi, functionName: 'initForSmartAccount', args: [owner.address] }),
        0n,
      ],
    });
    assert.equal(getAddress(onChain), getAddress(address));
  });

  test('SPONSORED: buildUserOp → sendUserOp → wait; the 192-byte signature is estimated as sent and the op executes', async () => {
    const { account, address } = await smartAccountFor('sponsored');
    const [depositBefore, counterBefore] = [await deposit(), await counter()];
    assert.equal(await e2e.fx.client.getCode({ address }), undefined, 'not deployed yet');

    const op = await account.buildUserOp([counterCall], { paymasterServiceData: { mode: 'SPONSORED' } });
    const sent = e2e.lastCall();
    assert.equal(sent.method, 'pm_sponsorUserOperation');
    assert.equal(sent.status, 200, JSON.stringify(sent.response));
    const dummy = sent.userOp.signature;
    assert.ok(typeof dummy === 'string' && dummy.startsWith('0x'));
    assert.equal(size(dummy as Hex), 192, 'the SDK’s dummy: abi.encode(65-byte signature, module address)');
    assert.equal(getAddress(op.paymasterAndData.slice(0, 42)), getAddress(e2e.fx.paymaster));

    const sentOp = await account.sendUserOp(op);
    const { success, receipt } = await sentOp.wait();
    assert.equal(success, true, alto.output());
    const { event } = await paidByPatron(receipt.transactionHash, address);
    assert.equal(event.args.userOpHash, sentOp.userOpHash);
    assert.equal(depositBefore - (await deposit()), event.args.actualGasCost, 'the deposit paid the gas');
    assert.notEqual(await e2e.fx.client.getCode({ address }), undefined, 'the account was deployed');
    assert.equal(await counter(), counterBefore + 1n, 'the call executed');
  });

  test('ERC20: getTokenFees → buildUserOp with the quote → sendUserOp; the fee receiver gets at most the quote', async () => {
    const { account, address } = await smartAccountFor('erc20');
    const usdc = e2e.fx.tokens.find((t) => t.symbol === 'USDC');
    assert.ok(usdc);
    await mintToken(e2e.fx, usdc.address, address, 1_000n * 10n ** BigInt(usdc.decimals));

    const quotes = await account.getTokenFees(counterCall, {
      paymasterServiceData: { mode: 'ERC20', preferredToken: usdc.address },
    });
    assert.equal(e2e.lastCall().method, 'pm_getFeeQuoteOrData');
    const feeQuote = quotes.feeQuotes?.[0];
    assert.ok(feeQuote !== undefined && quotes.tokenPaymasterAddress !== undefined, JSON.stringify(quotes));
    assert.equal(getAddress(feeQuote.tokenAddress), usdc.address, 'the preferred token’s quote first');
    assert.equal(getAddress(quotes.tokenPaymasterAddress), getAddress(e2e.fx.paymaster));

    const op = await account.buildUserOp([counterCall], {
      paymasterServiceData: { mode: 'ERC20', feeQuote, spender: quotes.tokenPaymasterAddress },
    });
    assert.equal(e2e.lastCall().method, 'pm_sponsorUserOperation');
    assert.equal(op.paymasterAndData.length, TOKEN_PAYMASTER_AND_DATA_HEX_LENGTH);

    const [receiverBefore, counterBefore] = [await tokenBalance(e2e.fx, usdc.address, FEE_RECEIVER), await counter()];
    const { success, receipt } = await (await account.sendUserOp(op)).wait();
    assert.equal(success, true, alto.output());
    const { receipt: mined } = await paidByPatron(receipt.transactionHash, address);
    const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: mined.logs, eventName: 'TokenCharged' });
    assert.ok(charged, 'the paymaster charged the token');
    const gained = (await tokenBalance(e2e.fx, usdc.address, FEE_RECEIVER)) - receiverBefore;
    assert.equal(gained, charged.args.charge);
    assert.ok(gained > 0n);
    const quoted = BigInt(Math.ceil(feeQuote.maxGasFee * 10 ** feeQuote.decimal));
    assert.ok(gained <= quoted, `charged ${gained}, quoted at most ${quoted}`);
    assert.equal(await counter(), counterBefore + 1n, 'the call executed');
  });
});
