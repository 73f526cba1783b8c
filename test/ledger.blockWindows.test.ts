import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPublicClient, custom, toHex } from 'viem';
import { toSimple7702SmartAccount } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { BLOCK_RANGE_FLAG, decodePaymasterAndDataV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { COUNTER_ADDRESS, testKey } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { BACKEND, createTenant, withoutHoldShares } from './helpers/testContext.js';

/**
 * Hole 2 of issue 20 with EntryPoint v0.9 block windows: signatures whose window is counted in block numbers are
 * held by the ledger until the settlement cursor's block number is past the window's last block, whatever the
 * server's clock (on main, 3 ops signed at a 3-op cap, released by the clock, 3 more signed at the same head, all
 * 6 included). Here the head stays put while the cap is spent: nothing is released and the cap keeps refusing;
 * once the chain moves past the last block the reservations are released and signing resumes.
 */
let app: RpcFixture;
before(async () => {
  app = await startRpcFixture();
});
after(() => app.close());

const GAS = { callGasLimit: 200_000n, verificationGasLimit: 300_000n, preVerificationGas: 50_000n };
const wire = (op: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(op).map(([k, v]) => [k, typeof v === 'bigint' ? toHex(v) : v]));
const head = async () => Number(BigInt(String(await app.fx.chain.request({ method: 'eth_blockNumber' }))));

let salt = 0;
/** An EOA delegated to Simple7702Account v0.9 (its type-4 transaction mines a block) and its op. */
async function delegatedAccountOp() {
  const owner = privateKeyToAccount(testKey(`ledger-blocks-${salt++}`));
  const authorization = await owner.signAuthorization({
    contractAddress: app.fx.simple7702Accounts['0.9'],
    chainId: app.fx.chain.chainId,
    nonce: 0,
  });
  const tx = await app.fx.bundler.sendTransaction({ to: owner.address, authorizationList: [authorization] });
  assert.equal((await app.fx.client.waitForTransactionReceipt({ hash: tx })).status, 'success');
  const client = createPublicClient({ chain: app.fx.client.chain, transport: custom(app.fx.chain) });
  const account = await toSimple7702SmartAccount({ client, owner, entryPoint: '0.9' });
  const block = await app.fx.client.getBlock();
  return {
    sender: account.address,
    nonce: await account.getNonce(),
    callData: await account.encodeCalls([{ to: COUNTER_ADDRESS, data: '0x01' }]),
    maxFeePerGas: (block.baseFeePerGas ?? 0n) * 2n + 1_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    signature: await account.getStubSignature(),
    ...GAS,
  };
}

describe(`v0.9 block windows hold their reservation until the chain is past them (${BACKEND})`, () => {
  test('3 ops at a 3-op cap at one head: the 4th refused until the head is past the last block', async () => {
    const tenant = await createTenant(app.ctx.deps);
    await withoutHoldShares(app.ctx.deps, tenant.dappId);
    const policy = await app.ctx.deps.policies.create({
      dappId: tenant.dappId,
      name: 'three',
      rules: { caps: [{ scope: 'dapp', unit: 'ops', limit: '3' }] },
    });
    const rpc = async (op: Record<string, unknown>) => {
      const res = await app.ctx.app.inject({
        method: 'POST',
        url: `/api/v2/${app.fx.chain.chainId}/${tenant.apiKey}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'pm_getPaymasterData',
          params: [
            wire(op),
            app.fx.entryPoints['0.9'],
            toHex(BigInt(app.fx.chain.chainId)),
            // 24 s at the default 12 s per block: a window of 2 blocks.
            { validityUnit: 'blocks', expiryDuration: 24 },
          ],
        }),
      });
      return res.json() as { result?: Record<string, unknown>; error?: { code: number; data?: { rule?: string } } };
    };
    const reserved = async () =>
      (await app.ctx.deps.policies.usage({ dappId: tenant.dappId, policyId: policy.id }))[0]?.reserved;
    const ops: Awaited<ReturnType<typeof delegatedAccountOp>>[] = [];
    for (let i = 0; i < 5; i++) ops.push(await delegatedAccountOp());
    await app.ctx.deps.settlement.runOnce();
    const at = await head();
    const signed: Awaited<ReturnType<typeof rpc>>[] = [];
    for (const op of ops.slice(0, 3)) signed.push(await rpc(op));
    const lasts = signed.map((s) => {
      assert.ok(s.result, JSON.stringify(s.error));
      const w = decodePaymasterAndDataV07(
        `0x${String(s.result.paymaster).slice(2)}${toHex(BigInt(String(s.result.paymasterVerificationGasLimit)), { size: 16 }).slice(2)}${toHex(BigInt(String(s.result.paymasterPostOpGasLimit)), { size: 16 }).slice(2)}${String(s.result.paymasterData).slice(2)}`,
      );
      return w.validUntil - BLOCK_RANGE_FLAG;
    });
    assert.deepEqual(lasts, [at + 2, at + 2, at + 2], 'each window ends two blocks after the head');
    const refused = async () => {
      const r = await rpc(ops[3] ?? {});
      assert.equal(r.error?.data?.rule, 'cap', JSON.stringify(r));
    };
    await refused();
    // The head does not move: a settlement round releases nothing, however late the server's clock.
    await app.ctx.deps.settlement.runOnce();
    assert.equal(await reserved(), '3');
    await refused();
    // The chain reaches the last block: an op could still be in it (it is settled by then, so none was).
    await app.fx.chain.request({ method: 'hardhat_mine', params: [toHex(at + 2 - (await head()))] });
    await app.ctx.deps.settlement.runOnce();
    assert.equal(await reserved(), '3');
    await refused();
    // One block past it: none of the three can be included any more; released, and the cap has room again.
    await app.fx.chain.request({ method: 'hardhat_mine', params: ['0x1'] });
    await app.ctx.deps.settlement.runOnce();
    assert.equal(await reserved(), '0');
    assert.ok((await rpc(ops[4] ?? {})).result, 'signed again');
    assert.equal(await reserved(), '1');
  });
});
