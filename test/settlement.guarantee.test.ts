import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { type Address, createPublicClient, custom, encodeFunctionData, getAddress, maxUint256 } from 'viem';
import { devTokenAbi } from '../src/chain/artifacts.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { maxTokenCostV07 } from '../src/paymaster/entryPoints/v07/chargesV07.js';
import { createSettlementFollower, type SettlementFollower } from '../src/settlement/settlementFollower.js';
import type { ReservationKind } from '../src/store/ledger/spendLedgerRepository.js';
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
  userOpHashOf,
  useV07Chain,
} from './helpers/patronPaymasterV07.js';
import { BACKEND, dropTestSchema, insertBareDapp, openTestStore } from './helpers/testContext.js';

/**
 * Guarantees (issue 20, with helper A's token mode): a token-mode op whose charge is collected after execution is
 * reserved as a 'guarantee'. When settlement reads its UserOperationEvent it releases the reservation if the
 * paymaster's TokenCharged for the op's sender is in the op's transaction (the user paid), else settles it at the
 * op's actualGasCost (the deposit paid). Tested on chain with PatronPaymasterV07's token mode on EntryPoint v0.7:
 * the rule reads events, whatever mode byte helper A adds. The TokenCharged logs are read only for a slice that
 * has a guarantee to settle.
 */
const RATE_USDC = 3000n * 10n ** 6n;
const price = { exchangeRate: RATE_USDC, priceMarkup: 1_100_000 };
const CAP = 10n ** 18n;

describe(`settlement of guarantees (${BACKEND})`, () => {
  let usdc: DevTokenInfo;
  let other: DevTokenInfo;
  const chain = useV07Chain('0.7', {
    async setUp(fx) {
      [usdc, other] = fx.tokens as [DevTokenInfo, DevTokenInfo];
      await setFeeReceiver(fx, getAddress('0x00000000000000000000000000000000fee0fee0'));
    },
  });
  let store: Store;
  let schema: string | undefined;
  let dappId: string;
  let key: string;
  /** eth_getLogs calls for the paymaster's own logs (TokenCharged). */
  let paymasterLogReads: number;

  beforeEach(async () => {
    ({ store, schema } = await openTestStore());
    dappId = await insertBareDapp(store, 'guarantee');
    key = `g|${randomUUID()}`;
    paymasterLogReads = 0;
  });
  afterEach(async () => {
    await store.close();
    await dropTestSchema(schema);
  });

  function follower(): SettlementFollower {
    const fx = chain.fx;
    const client = createPublicClient({
      transport: custom({
        request: async (args: { method: string; params?: unknown }) => {
          const [filter] = (args.params ?? []) as { address?: string }[];
          if (args.method === 'eth_getLogs' && filter?.address?.toLowerCase() === fx.paymaster.toLowerCase()) {
            paymasterLogReads++;
          }
          return fx.chain.request(args as Parameters<typeof fx.chain.request>[0]);
        },
      }),
    });
    return createSettlementFollower({
      chain: { chainId: fx.chainId, client, entryPoint: fx.entryPoint, paymaster: fx.paymaster },
      cursors: store.chainCursors,
      ledger: store.spendLedger,
      nativeUsdMicros: () => undefined,
      confirmations: 0,
      maxBlockRange: 2000n,
      logger: { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} },
      now: Date.now,
    });
  }

  /** A token-mode op (approval batched in its callData, to `approveToken`), signed by the paymaster and the account. */
  async function tokenOp(approveToken: Address, salt = 0n): Promise<OpV07> {
    const fx = chain.fx;
    const base = await buildDeployingOp(fx, {
      sender: await accountAddress(fx, salt),
      initCode: createAccountInitCode(fx, salt),
      callGasLimit: 150_000n,
      paymasterPostOpGasLimit: 100_000n,
    });
    const maxTokenCost = maxTokenCostV07(signedGasOf(base), base.maxFeePerGas, price, '0.7');
    const approve = encodeFunctionData({ abi: devTokenAbi, functionName: 'approve', args: [fx.paymaster, maxUint256] });
    const op: OpV07 = {
      ...base,
      callData: batchCallData('0.7', [
        { target: approveToken, data: approve },
        { target: COUNTER_ADDRESS, data: '0x' },
      ]),
    };
    const signed = await signPaymaster(fx, op, {
      ...chain.window,
      // Mode 2 (helper A): the approval batched in callData, the charge collected in postOp, so it can fail.
      token: { token: usdc.address, ...price, maxTokenCost, guaranteed: true },
    });
    return signAccount(fx, signed);
  }

  async function reserve(op: OpV07, kind: ReservationKind): Promise<void> {
    const hash = userOpHashOf(chain.fx, op).toLowerCase();
    const r = await store.spendLedger.reserve({
      id: `${chain.fx.chainId}:${hash}`,
      dappId,
      chainId: chain.fx.chainId,
      userOpHash: hash,
      charges: [{ key, unit: 'wei', amount: 10n ** 16n, limit: CAP, windowEnd: undefined }],
      expiresAt: Date.now() + 3_600_000,
      now: Date.now(),
      window: { unit: 'seconds', until: chain.window.validUntil },
      paymaster: chain.fx.paymaster,
      kind,
    });
    assert.deepEqual(r, { ok: true });
  }

  const counter = async () => (await store.spendLedger.counters([key])).get(key);

  test('the user paid (TokenCharged for the sender): released; the charge failed: settled at the deposit’s cost', async () => {
    const f = follower();
    await f.runOnce();
    const paying = await tokenOp(usdc.address);
    await mintToken(chain.fx, usdc.address, paying.sender, 10n ** 12n);
    await reserve(paying, 'guarantee');
    const paid = await handleOne(chain.fx, paying);
    assert.equal(paid.event.args.success, true);
    assert.equal((await f.runOnce()).settled, 1);
    assert.deepEqual(await counter(), { used: 0n, reserved: 0n }, 'the user paid: nothing of the cap is used');
    assert.equal(paymasterLogReads, 1, 'one TokenCharged read for the slice');

    // The approval goes to another token: postOp cannot collect, the EntryPoint charges the deposit.
    const failing = await tokenOp(other.address, 1n);
    await mintToken(chain.fx, usdc.address, failing.sender, 10n ** 12n);
    await reserve(failing, 'guarantee');
    const unpaid = await handleOne(chain.fx, failing);
    assert.equal(unpaid.event.args.success, false);
    assert.equal((await f.runOnce()).settled, 1);
    assert.deepEqual(await counter(), { used: unpaid.event.args.actualGasCost, reserved: 0n }, 'the deposit paid');
    assert.equal(paymasterLogReads, 2);
  });

  test('a sponsored reservation is settled without reading TokenCharged, even when the op paid in tokens', async () => {
    const f = follower();
    await f.runOnce();
    const op = await tokenOp(usdc.address);
    await mintToken(chain.fx, usdc.address, op.sender, 10n ** 12n);
    await reserve(op, 'sponsored');
    const { event } = await handleOne(chain.fx, op);
    assert.equal((await f.runOnce()).settled, 1);
    assert.deepEqual(await counter(), { used: event.args.actualGasCost, reserved: 0n });
    assert.equal(paymasterLogReads, 0);
  });
});
