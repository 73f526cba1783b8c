import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hexToBytes } from 'viem';
import { getUserOperationHash } from 'viem/account-abstraction';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import {
  buildDeployingOp,
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  signAccount,
  startPatronFixture,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp } from './helpers/rpcFixture.js';
import { BACKEND, createTenant, createTestContext, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * A sponsorship signed through the app (a dApp with no policy, so no cap: its row is the ledger's alone), then
 * included on the in-process chain and read by settlement, shows in the ledger as included, with its actual cost,
 * transaction and block, and in the stats and the CSV.
 */
let fx: PatronFixture;
let ctx: TestContext;
let tenant: Tenant;

before(async () => {
  fx = await startPatronFixture();
  ctx = await createTestContext({ chains: [fixtureChainRuntime(fx)], signerKey: hexToBytes(KEYS.signer) });
  tenant = await createTenant(ctx.deps);
});
after(async () => {
  await ctx.close();
  await fx.close();
});

const ledger = async (path: string) => {
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/api/admin/dapps/${tenant.dappId}/${path}`,
    headers: { authorization: `Bearer ${tenant.authToken}` },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res;
};

test(`a signed op, included on chain, is in the ledger as included with its cost and tx (${BACKEND})`, async () => {
  const op = await buildDeployingOp(fx, 71n);
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/${fx.chain.chainId}/${tenant.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'pm_sponsorUserOperation',
      params: [biconomyWireOp(op, false), { mode: 'SPONSORED', calculateGasLimits: true }],
    }),
  });
  const result = (res.json() as { result?: Record<string, unknown> }).result;
  assert.ok(result, res.body);
  const final: UserOperationV06 = {
    ...op,
    paymasterAndData: result.paymasterAndData as `0x${string}`,
    callGasLimit: BigInt(result.callGasLimit as number),
    verificationGasLimit: BigInt(result.verificationGasLimit as number),
    preVerificationGas: BigInt(result.preVerificationGas as string),
  };
  const signed = await signAccount(fx, final);
  const hash = getUserOperationHash({
    chainId: fx.chain.chainId,
    entryPointAddress: fx.entryPoint,
    entryPointVersion: '0.6',
    userOperation: signed,
  }).toLowerCase();

  type Item = Record<string, unknown>;
  const itemsOf = async () => ((await ledger('ledger')).json() as { data: { items: Item[] } }).data.items;
  const [reserved] = await itemsOf();
  assert.equal(reserved?.status, 'reserved', 'listed from the moment it is signed');
  assert.equal(reserved?.userOpHash, hash);
  assert.equal(String(reserved?.sender), op.sender.toLowerCase());
  assert.deepEqual(reserved?.policyIds, []);
  assert.ok(BigInt(String(reserved?.reservedWei)) > 0n);

  const { events, receipt } = await submitHandleOps(fx, [signed]);
  const cost = events[0]?.args.actualGasCost ?? 0n;
  assert.ok(cost > 0n);
  await ctx.deps.settlement.runOnce();

  const [item] = await itemsOf();
  assert.equal(item?.status, 'included');
  assert.equal(item?.actualWei, cost.toString());
  assert.equal(item?.txHash, receipt.transactionHash.toLowerCase());
  assert.equal(item?.blockNumber, Number(receipt.blockNumber));
  assert.ok(BigInt(String(item?.actualWei)) <= BigInt(String(item?.reservedWei)));

  const stats = (await ledger('ledger/stats?groupBy=day')).json() as { data: { total: Record<string, unknown> } };
  assert.equal(stats.data.total.count, 1);
  assert.equal(stats.data.total.settledWei, cost.toString());
  const csv = (await ledger('ledger.csv?status=included')).body.split('\r\n');
  assert.equal(csv.length, 3, 'the header, the row, and the last line end');
  assert.ok(csv[1]?.includes(receipt.transactionHash.toLowerCase()));
});
