import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import {
  type Address,
  createPublicClient,
  custom,
  encodeFunctionData,
  getAddress,
  maxUint256,
  parseEventLogs,
} from 'viem';
import { devTokenAbi } from '../src/chain/artifacts.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { tokenChargedEventAbi } from '../src/chain/userOperationEvents.js';
import { maxTokenCostV07 } from '../src/paymaster/entryPoints/v07/chargesV07.js';
import { createSettlementFollower } from '../src/settlement/settlementFollower.js';
import type { SettlementFollowerDeps } from '../src/settlement/settlementFollowerDeps.js';
import type { Store } from '../src/store/store.js';
import { COUNTER_ADDRESS } from './helpers/patronPaymasterV06.js';
import {
  accountAddress,
  batchCallData,
  buildDeployingOp,
  createAccountInitCode,
  handleOne,
  mintToken,
  type OpV07,
  setFeeReceiver,
  signAccount,
  signedGasOf,
  signPaymaster,
  useV07Chain,
} from './helpers/patronPaymasterV07.js';
import { BACKEND, dropTestSchema, openTestStore } from './helpers/testContext.js';

/**
 * token.charged's source: settlement tells onTokenCharged of a token-mode op's charge, read from its transaction on
 * the in-process chain (PatronPaymasterV07, EntryPoint v0.7): the first op approves in its own callData, so nothing
 * is prefunded and postOp collects the charge; the second, with the allowance in place, is prefunded the signed
 * maximum in validation and refunded the rest in postOp. Each amount is checked against the chain's own logs.
 */
const price = { exchangeRate: 3000n * 10n ** 6n, priceMarkup: 1_100_000 };
const FEE_RECEIVER = getAddress('0x00000000000000000000000000000000fee0fee0');

type Told = Parameters<NonNullable<SettlementFollowerDeps['onTokenCharged']>>[0];

describe(`token.charged from settlement (${BACKEND})`, () => {
  let usdc: DevTokenInfo;
  const chain = useV07Chain('0.7', {
    async setUp(fx) {
      [usdc] = fx.tokens as [DevTokenInfo];
      await setFeeReceiver(fx, FEE_RECEIVER);
    },
  });
  let store: Store;
  let schema: string | undefined;
  beforeEach(async () => {
    ({ store, schema } = await openTestStore());
  });
  afterEach(async () => {
    await store.close();
    await dropTestSchema(schema);
  });

  async function tokenOp(first: boolean): Promise<{ op: OpV07; maxTokenCost: bigint }> {
    const fx = chain.fx;
    const sender = await accountAddress(fx, 7n);
    const base = await buildDeployingOp(fx, {
      sender,
      initCode: first ? createAccountInitCode(fx, 7n) : '0x',
      callGasLimit: 150_000n,
      paymasterPostOpGasLimit: 100_000n,
    });
    const maxTokenCost = maxTokenCostV07(signedGasOf(base), base.maxFeePerGas, price, '0.7');
    const approve = encodeFunctionData({ abi: devTokenAbi, functionName: 'approve', args: [fx.paymaster, maxUint256] });
    const op: OpV07 = {
      ...base,
      callData: batchCallData('0.7', [
        ...(first ? [{ target: usdc.address as Address, data: approve }] : []),
        { target: COUNTER_ADDRESS, data: '0x' },
      ]),
    };
    const signed = await signPaymaster(fx, op, {
      ...chain.window,
      token: { token: usdc.address, ...price, maxTokenCost, guaranteed: true },
    });
    return { op: await signAccount(fx, signed), maxTokenCost };
  }

  test('collected in postOp (nothing prefunded), then prefunded in validation and the rest refunded', async () => {
    const told: Told[] = [];
    const fx = chain.fx;
    const f = createSettlementFollower({
      chain: {
        chainId: fx.chainId,
        client: createPublicClient({ transport: custom(fx.chain) }),
        entryPoint: fx.entryPoint,
        paymaster: fx.paymaster,
      },
      cursors: store.chainCursors,
      ledger: store.spendLedger,
      nativeUsdMicros: () => undefined,
      confirmations: 0,
      maxBlockRange: 2000n,
      logger: { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} },
      now: Date.now,
      onTokenCharged: async (args) => {
        told.push(args);
      },
    });
    await f.runOnce();
    const one = await tokenOp(true);
    await mintToken(fx, usdc.address, one.op.sender, 10n ** 12n);
    const first = await handleOne(fx, one.op);
    await f.runOnce();
    const two = await tokenOp(false);
    const second = await handleOne(fx, two.op);
    await f.runOnce();
    await f.runOnce();

    const chargeIn = (receipt: typeof first.receipt) =>
      parseEventLogs({ abi: [tokenChargedEventAbi], logs: receipt.logs })[0]?.args.charge;
    assert.equal(told.length, 2, 'once per op, whatever is read again');
    assert.equal(told[0]?.event.userOpHash, first.event.args.userOpHash);
    assert.deepEqual(told[0]?.charge, {
      token: getAddress(usdc.address),
      charged: chargeIn(first.receipt),
      prefunded: 0n,
      refunded: 0n,
    });
    const charged = chargeIn(second.receipt) ?? 0n;
    assert.ok(charged > 0n && charged < two.maxTokenCost);
    assert.deepEqual(told[1]?.charge, {
      token: getAddress(usdc.address),
      charged,
      prefunded: two.maxTokenCost,
      refunded: two.maxTokenCost - charged,
    });
  });
});
