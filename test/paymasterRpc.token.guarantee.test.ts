import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Address,
  concat,
  createPublicClient,
  custom,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  pad,
  parseAbi,
  parseEventLogs,
} from 'viem';
import {
  entryPoint07Abi,
  entryPoint08Abi,
  entryPoint09Abi,
  toPackedUserOperation,
  toSimple7702SmartAccount,
  type UserOperation,
} from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { ChainRuntime } from '../src/chain/chainRegistry.js';
import { createDevClient, waitForSuccess } from '../src/chain/devClient.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { UnavailableError, UnsupportedError } from '../src/errors/PatronError.js';
import { MODE_TOKEN } from '../src/paymaster/entryPoints/paymasterModes.js';
import { decodePaymasterAndDataV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { assertTokenModeStaked } from '../src/paymaster/token/tokenStake.js';
import { COUNTER_ADDRESS, mintToken, testKey, tokenBalance } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, newSimpleAccountOp, quantity, rpcV2 } from './helpers/rpcV07.js';
import { createTokenIssuer } from './helpers/sponsorshipTokens.js';
import { createTenant, enableTokenGuarantees } from './helpers/testContext.js';

/**
 * The token mode's two signed modes through the service (docs/guides/token-mode.md, "Paying gas in ERC-20"), on EntryPoint v0.7, v0.8
 * (SimpleAccount) and v0.9 (an EIP-7702 account), for a dApp that turned token guarantees on: an op that batches its
 * approval is signed in mode 2 only through the dApp's sponsorship gates (a deny-all policy refuses it at signing, -32012 saying why and how to avoid it), while an
 * op whose allowance is already on chain is signed in mode 1 under the same policy and executes with the prefund, the
 * refund and the charge visible as token transfers. The named policy in each dialect: paymasterRpc.token.namedPolicy.
 */
let app: RpcFixture;
let usdc: DevTokenInfo;
before(async () => {
  // The dApp turned token guarantees on: mode 2 then goes through its sponsorship gates (off: tokenGuarantees.attack).
  app = await startRpcFixture({ tokens: true, tokenGuarantees: true });
  [usdc] = app.fx.tokens as [DevTokenInfo];
});
after(() => app.close());

const ABIS = { '0.7': entryPoint07Abi, '0.8': entryPoint08Abi } as const;
const zeroGas = { callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n };
const approve = (spender: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] });

const tokenData = (version: '0.7' | '0.8' | '0.9', op: Record<string, unknown>) =>
  rpcV2(app, 'pm_getPaymasterData', [
    hexWire({ ...op, ...zeroGas }),
    app.fx.entryPoints[version],
    `0x${app.fx.chain.chainId.toString(16)}`,
    { mode: 'ERC20', calculateGasLimits: true, expiryDuration: 6000, tokenInfo: { feeTokenAddress: usdc.address } },
  ]);

/** Where the paymaster pays its token charges (its owner unless set). */
const feeReceiverOf = async (paymaster: Address) =>
  getAddress(
    await app.fx.client.readContract({ address: paymaster, abi: patronPaymasterAbi, functionName: 'feeReceiver' }),
  );

/** The sender approves the paymaster on chain itself (impersonated), before any op: an allowance in place. */
async function approveOnChain(sender: Address, spender: Address, amount: bigint) {
  await app.fx.client.impersonateAccount({ address: sender });
  await app.fx.client.setBalance({ address: sender, value: 10n ** 18n });
  const hash = await app.fx.client.writeContract({
    account: sender,
    address: usdc.address,
    abi: erc20Abi,
    functionName: 'approve',
    args: [spender, amount],
  });
  await app.fx.client.waitForTransactionReceipt({ hash });
  await app.fx.client.stopImpersonatingAccount({ address: sender });
}

for (const version of ['0.7', '0.8'] as const) {
  describe(`ERC20 mode 1 and 2 on EntryPoint v${version}, under a deny-all sponsorship policy`, () => {
    test('an op batching its approval (mode 2) is refused at signing; with the allowance already given it is signed in mode 1 and prefunded', async () => {
      const paymaster = app.fx.paymasters[version];
      const first = await newSimpleAccountOp(app.fx, version, [{ to: COUNTER_ADDRESS, data: '0x01' }]);
      const sender = first.op.sender;
      await mintToken(app.fx, usdc.address, sender, 1_000_000_000n);
      const policy = await app.ctx.deps.policies.create({
        dappId: app.tenant.dappId,
        name: `deny-${version}`,
        rules: { senders: { block: [sender] } },
      });
      try {
        const batched = await first.account.encodeCalls([
          { to: usdc.address, data: approve(paymaster, 50_000_000n) },
          { to: COUNTER_ADDRESS, data: '0x01' },
        ]);
        const denied = await tokenData(version, { ...first.op, callData: batched });
        assert.equal(denied.body.error?.code, -32012, JSON.stringify(denied.body));
        assert.match(denied.body.error?.message ?? '', /batches its USDC approval/);
        assert.match(denied.body.error?.message ?? '', /approve the paymaster 0x[0-9a-fA-F]{40} for USDC before/);

        // The same account, deployed and its allowance given on chain before the op: mode 1, the user's own money,
        // no gate.
        // v0.8's SimpleAccountFactory takes calls from the EntryPoint's SenderCreator only: deployed as that.
        const creator =
          version === '0.7'
            ? app.fx.client.account.address
            : await app.fx.client.readContract({
                address: app.fx.entryPoints[version],
                abi: parseAbi(['function senderCreator() view returns (address)']),
                functionName: 'senderCreator',
              });
        await app.fx.client.impersonateAccount({ address: creator });
        await app.fx.client.setBalance({ address: creator, value: 10n ** 18n });
        const deploy = await app.fx.client.sendTransaction({
          account: creator,
          to: first.op.factory as Address,
          data: first.op.factoryData as Hex,
        });
        await app.fx.client.waitForTransactionReceipt({ hash: deploy });
        await approveOnChain(sender, paymaster, 50_000_000n);
        const { factory: _f, factoryData: _fd, ...deployed } = first.op;
        const r = await tokenData(version, deployed);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        const d = r.body.result ?? {};
        const data = concat([d.paymaster as Hex, pad('0x', { size: 32 }), d.paymasterData as Hex]);
        assert.equal(data.slice(2 + 104, 2 + 106), '01', 'mode byte 1');
        const signed = decodePaymasterAndDataV07(data);
        assert.equal(signed.fields.mode, MODE_TOKEN);
        const maxTokenCost = signed.fields.mode === MODE_TOKEN ? signed.fields.maxTokenCost : 0n;
        const op = {
          ...deployed,
          callGasLimit: quantity(d.callGasLimit),
          verificationGasLimit: quantity(d.verificationGasLimit),
          preVerificationGas: quantity(d.preVerificationGas),
          paymaster: d.paymaster as Address,
          paymasterVerificationGasLimit: quantity(d.paymasterVerificationGasLimit),
          paymasterPostOpGasLimit: quantity(d.paymasterPostOpGasLimit),
          paymasterData: d.paymasterData as Hex,
        } as UserOperation<'0.7'>;
        const signature = await first.account.signUserOperation({ ...op, chainId: app.fx.chain.chainId });
        const before = await tokenBalance(app.fx, usdc.address, sender);
        const hash = await app.fx.bundler.writeContract({
          address: app.fx.entryPoints[version],
          abi: ABIS[version],
          functionName: 'handleOps',
          args: [[toPackedUserOperation({ ...op, signature })], app.fx.bundler.account.address],
          gas: 5_000_000n,
        });
        const receipt = await app.fx.client.waitForTransactionReceipt({ hash });
        assert.equal(receipt.status, 'success');
        const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs, eventName: 'TokenCharged' });
        assert.ok(charged !== undefined);
        const moves = parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: 'Transfer' })
          .filter((l) => getAddress(l.address) === getAddress(usdc.address))
          .map((l) => [getAddress(l.args.from), getAddress(l.args.to), l.args.value]);
        const pm = getAddress(paymaster);
        assert.deepEqual(moves, [
          [getAddress(sender), pm, maxTokenCost],
          [pm, getAddress(sender), maxTokenCost - charged.args.charge],
          [pm, await feeReceiverOf(paymaster), charged.args.charge],
        ]);
        assert.equal(await tokenBalance(app.fx, usdc.address, sender), before - charged.args.charge);
      } finally {
        await app.ctx.deps.policies.delete({ dappId: app.tenant.dappId, policyId: policy.id });
      }
    });
  });
}

/** An EOA delegated to Simple7702Account v0.9 (a type-4 transaction sent by the bundler key), holding ETH for gas. */
async function delegatedV09Account(label: string) {
  const owner = privateKeyToAccount(testKey(`guarantee-v09-${label}`));
  const authorization = await owner.signAuthorization({
    contractAddress: app.fx.simple7702Accounts['0.9'],
    chainId: app.fx.chain.chainId,
    nonce: 0,
  });
  const tx = await app.fx.bundler.sendTransaction({ to: owner.address, authorizationList: [authorization] });
  assert.equal((await app.fx.client.waitForTransactionReceipt({ hash: tx })).status, 'success');
  await app.fx.client.setBalance({ address: owner.address, value: 10n ** 18n });
  const client = createPublicClient({ chain: app.fx.client.chain, transport: custom(app.fx.chain) });
  const account = await toSimple7702SmartAccount({ client, owner, entryPoint: '0.9' });
  const opOf = async (calls: readonly { to: Address; data: Hex }[]) => {
    const block = await app.fx.client.getBlock();
    const maxPriorityFeePerGas = 1_000_000_000n;
    return {
      sender: account.address,
      nonce: await account.getNonce(),
      callData: await account.encodeCalls(calls),
      maxFeePerGas: (block.baseFeePerGas ?? 0n) * 2n + maxPriorityFeePerGas,
      maxPriorityFeePerGas,
      signature: await account.getStubSignature(),
    };
  };
  return { owner, account, opOf };
}

describe('ERC20 mode 1 and 2 on EntryPoint v0.9 (an EIP-7702 account), under a deny-all sponsorship policy', () => {
  test('the batched approval (mode 2) is refused at signing; after the EOA approves on chain, mode 1 executes with prefund, refund and charge', async () => {
    const paymaster = app.fx.paymasters['0.9'];
    const { owner, account, opOf } = await delegatedV09Account('deny-all');
    const sender = account.address;
    await mintToken(app.fx, usdc.address, sender, 1_000_000_000n);
    const policy = await app.ctx.deps.policies.create({
      dappId: app.tenant.dappId,
      name: 'deny-0.9',
      rules: { senders: { block: [sender] } },
    });
    try {
      const batched = await opOf([
        { to: usdc.address, data: approve(paymaster, 50_000_000n) },
        { to: COUNTER_ADDRESS, data: '0x01' },
      ]);
      const denied = await tokenData('0.9', batched);
      assert.equal(denied.body.error?.code, -32012, JSON.stringify(denied.body));
      assert.match(denied.body.error?.message ?? '', /batches its USDC approval/);

      // The account is an EOA: it approves the paymaster with a transaction of its own, no impersonation.
      const owned = createDevClient({ chain: app.fx.chain, account: owner });
      await waitForSuccess(
        app.fx.client,
        await owned.writeContract({
          address: usdc.address,
          abi: erc20Abi,
          functionName: 'approve',
          args: [paymaster, 50_000_000n],
        }),
        'approve the paymaster',
      );
      const plain = await opOf([{ to: COUNTER_ADDRESS, data: '0x01' }]);
      const r = await tokenData('0.9', plain);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const d = r.body.result ?? {};
      const data = concat([d.paymaster as Hex, pad('0x', { size: 32 }), d.paymasterData as Hex]);
      assert.equal(data.slice(2 + 104, 2 + 106), '01', 'mode byte 1');
      const signed = decodePaymasterAndDataV07(data);
      const maxTokenCost = signed.fields.mode === MODE_TOKEN ? signed.fields.maxTokenCost : 0n;
      assert.ok(maxTokenCost > 0n);
      const op = {
        ...plain,
        callGasLimit: quantity(d.callGasLimit),
        verificationGasLimit: quantity(d.verificationGasLimit),
        preVerificationGas: quantity(d.preVerificationGas),
        paymaster: d.paymaster as Address,
        paymasterVerificationGasLimit: quantity(d.paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: quantity(d.paymasterPostOpGasLimit),
        paymasterData: d.paymasterData as Hex,
      } as UserOperation<'0.9'>;
      const signature = await account.signUserOperation({ ...op, chainId: app.fx.chain.chainId });
      const before = await tokenBalance(app.fx, usdc.address, sender);
      const hash = await app.fx.bundler.writeContract({
        address: app.fx.entryPoints['0.9'],
        abi: entryPoint09Abi,
        functionName: 'handleOps',
        args: [[toPackedUserOperation({ ...op, signature })], app.fx.bundler.account.address],
        gas: 5_000_000n,
      });
      const receipt = await app.fx.client.waitForTransactionReceipt({ hash });
      assert.equal(receipt.status, 'success');
      const [event] = parseEventLogs({ abi: entryPoint09Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
      assert.equal(event?.args.success, true);
      const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs, eventName: 'TokenCharged' });
      assert.ok(charged !== undefined && charged.args.charge > 0n);
      const moves = parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: 'Transfer' })
        .filter((l) => getAddress(l.address) === getAddress(usdc.address))
        .map((l) => [getAddress(l.args.from), getAddress(l.args.to), l.args.value]);
      const pm = getAddress(paymaster);
      assert.deepEqual(moves, [
        [getAddress(sender), pm, maxTokenCost],
        [pm, getAddress(sender), maxTokenCost - charged.args.charge],
        [pm, await feeReceiverOf(paymaster), charged.args.charge],
      ]);
      assert.equal(await tokenBalance(app.fx, usdc.address, sender), before - charged.args.charge);
    } finally {
      await app.ctx.deps.policies.delete({ dappId: app.tenant.dappId, policyId: policy.id });
    }
  });
});

describe('the token mode needs a staked paymaster on a configured chain', () => {
  const chain = { chainId: 8453, embedded: false, entryPointVersion: '0.7' } as ChainRuntime;
  const configured: ChainRuntime = {
    ...chain,
    paymaster: '0x00000000000000000000000000000000000000aa',
    entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
  };
  test('refused with -32030 naming the paymaster, the EntryPoint and addStake when known unstaked', () => {
    assert.throws(
      () => assertTokenModeStaked(configured, false),
      (err: unknown) =>
        err instanceof UnsupportedError &&
        /0x00000000000000000000000000000000000000aA|0x00000000000000000000000000000000000000AA/i.test(err.message) &&
        err.message.includes('0x0000000071727De22E5E9d8BAf0edAc6f37da032') &&
        err.message.includes('addStake'),
    );
    assert.doesNotThrow(() => assertTokenModeStaked(configured, true));
    assert.throws(
      () => assertTokenModeStaked(configured, undefined),
      (err: unknown) => err instanceof UnavailableError && /has not been read yet/.test(err.message),
      'not read yet: refused as transient',
    );
    assert.doesNotThrow(() => assertTokenModeStaked({ ...configured, embedded: true }, false));
  });
});

describe('a sponsorship token in the token mode: a refusal never spends it (issue 31)', () => {
  test('a guarantee a policy cap refuses leaves the token usable; once the cap has room it signs, then never again', async () => {
    const issuer = await createTokenIssuer();
    const tenant = await createTenant(app.ctx.deps);
    await enableTokenGuarantees(app.ctx.deps, tenant);
    await app.ctx.deps.accounts.setDappSponsorshipTokens({
      accountId: tenant.accountId,
      dappId: tenant.dappId,
      settings: issuer.settings(true),
    });
    const policy = await app.ctx.deps.policies.create({
      dappId: tenant.dappId,
      name: 'tiny',
      rules: { caps: [{ scope: 'dapp', unit: 'wei', limit: '1' }] },
    });
    const paymaster = app.fx.paymasters['0.7'];
    const { op } = await newSimpleAccountOp(app.fx, '0.7', [
      { to: usdc.address, data: approve(paymaster, 10n ** 12n) },
      { to: COUNTER_ADDRESS, data: '0x01' },
    ]);
    await mintToken(app.fx, usdc.address, op.sender, 10n ** 9n);
    const token = await issuer.mint({ aud: tenant.dappId });
    const ask = () =>
      rpcV2(
        app,
        'pm_getPaymasterData',
        [
          hexWire({ ...op, ...zeroGas }),
          app.fx.entryPoints['0.7'],
          `0x${app.fx.chain.chainId.toString(16)}`,
          {
            mode: 'ERC20',
            calculateGasLimits: true,
            tokenInfo: { feeTokenAddress: usdc.address },
            sponsorshipToken: token,
          },
        ],
        tenant.apiKey,
      );
    const capped = await ask();
    assert.equal(capped.body.error?.code, -32012, JSON.stringify(capped.body));
    assert.equal((capped.body.error?.data as { rule?: string } | undefined)?.rule, 'cap');
    // Before issue 31 the token mode spent the jti before the reservation: this was `replayed`.
    await app.ctx.deps.policies.update({
      dappId: tenant.dappId,
      policyId: policy.id,
      rules: { caps: [{ scope: 'dapp', unit: 'wei', limit: (10n ** 18n).toString() }] },
    });
    const signed = await ask();
    assert.ok(signed.body.result, JSON.stringify(signed.body.error));
    const again = await ask();
    assert.equal(again.body.error?.code, -32013);
    assert.equal((again.body.error?.data as { reason?: string } | undefined)?.reason, 'replayed');
  });
});
