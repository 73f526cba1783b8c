import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, concat, type Hex, keccak256, parseEventLogs, toHex } from 'viem';
import {
  entryPoint08Abi,
  entryPoint09Abi,
  toPackedUserOperation,
  toSimple7702SmartAccount,
  type UserOperation,
} from 'viem/account-abstraction';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { waitForSuccess } from '../src/chain/devClient.js';
import { BURNER_CODE } from './helpers/attackerAccount.js';
import { COUNTER_ADDRESS, counterValue, type PatronFixture, revertOf, testKey } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, rpcV2 } from './helpers/rpcV07.js';
import { sdkClientOf } from './helpers/simpleAccountV07.js';

/**
 * Issue 20, hole 3's EIP-7702 part, on EntryPoint v0.8 and v0.9, the attacker's way (its own EOA, its own type-4
 * transactions, its own bundler as beneficiary): the delegate allowlist binds an EOA that is already delegated,
 * without the 0x7702 marker or an authorization; a sender with no code at all is refused; and an EOA that
 * re-delegates between Patron's signature and inclusion finds the signature void on chain (AA34: PatronPaymasterV07
 * binds the sender's code hash), so the deposit pays nothing. One chain for the file.
 */

const ABIS = { '0.8': entryPoint08Abi, '0.9': entryPoint09Abi } as const;

let app: RpcFixture;
let fx: PatronFixture;
let burner: Address;

before(async () => {
  app = await startRpcFixture({ tokens: true });
  fx = app.fx;
  burner = privateKeyToAccount(testKey('7702-burner-delegate')).address;
  await fx.client.setCode({ address: burner, bytecode: BURNER_CODE });
});
after(() => app.close());

/** The EOA delegates to `delegate`: a type-4 transaction of the attacker's (its bundler pays). */
async function delegate(eoa: PrivateKeyAccount, to: Address): Promise<void> {
  const nonce = await fx.client.getTransactionCount({ address: eoa.address });
  const authorization = await eoa.signAuthorization({ contractAddress: to, chainId: fx.chain.chainId, nonce });
  // Sent to the bundler itself: the authorization is applied whatever the call (a call to the EOA would run the
  // burner's loop).
  const hash = await fx.bundler.sendTransaction({
    authorizationList: [authorization],
    to: fx.bundler.account.address,
    data: '0x',
  });
  await waitForSuccess(fx.client, hash, 'the delegation');
  assert.equal(await fx.client.getCode({ address: eoa.address }), concat(['0xef0100', to]).toLowerCase());
}

for (const version of ['0.8', '0.9'] as const) {
  describe(`EntryPoint v${version}`, () => {
    const entryPoint = () => fx.entryPoints[version];
    const abi = ABIS[version];
    const deposit = () =>
      fx.client.readContract({ address: entryPoint(), abi, functionName: 'balanceOf', args: [fx.paymasters[version]] });
    const gas = { callGasLimit: 100_000n, verificationGasLimit: 120_000n, preVerificationGas: 52_000n };
    const fees = { maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
    const ask = (op: Record<string, unknown>) =>
      rpcV2(app, 'pm_getPaymasterData', [hexWire(op), entryPoint(), toHex(fx.chain.chainId), {}]);

    /** An EOA delegated to Simple7702Account of this version, as viem's account for it. */
    async function simple7702(label: string) {
      const eoa = privateKeyToAccount(testKey(`7702-${version}-${label}`));
      await delegate(eoa, fx.simple7702Accounts[version]);
      const account = await toSimple7702SmartAccount({ client: sdkClientOf(fx), owner: eoa, entryPoint: version });
      return { eoa, account };
    }

    /** The op Patron answers for, completed with its paymaster fields and signed by the account. */
    async function sponsoredOp(account: Awaited<ReturnType<typeof toSimple7702SmartAccount>>) {
      const op = {
        sender: account.address,
        nonce: await account.getNonce(),
        callData: await account.encodeCalls([{ to: COUNTER_ADDRESS, data: '0x01' }]),
        ...gas,
        ...fees,
        signature: '0x' as Hex,
      };
      const r = await ask(op);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const res = r.body.result ?? {};
      const full: UserOperation<'0.8'> = {
        ...op,
        paymaster: res.paymaster as Address,
        paymasterData: res.paymasterData as Hex,
        paymasterVerificationGasLimit: BigInt(String(res.paymasterVerificationGasLimit)),
        paymasterPostOpGasLimit: BigInt(String(res.paymasterPostOpGasLimit)),
      };
      return { ...full, signature: await account.signUserOperation({ ...full, chainId: fx.chain.chainId }) };
    }

    test('an EOA already delegated to a delegate not allowed, without marker or authorization, is refused', async () => {
      const eoa = privateKeyToAccount(testKey(`7702-${version}-evil`));
      await delegate(eoa, burner);
      const r = await ask({ sender: eoa.address, nonce: 0n, callData: '0x', ...gas, ...fees, signature: '0x' });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, -32030);
      assert.match(r.body.error?.message ?? '', new RegExp(`EIP-7702 delegate ${burner} is not sponsored`, 'i'));
      // The stub refuses it too, before the wallet pays for an estimate.
      const stub = await rpcV2(app, 'pm_getPaymasterStubData', [
        hexWire({ sender: eoa.address, nonce: 0n, callData: '0x', ...gas, ...fees, signature: '0x' }),
        entryPoint(),
        toHex(fx.chain.chainId),
        {},
      ]);
      assert.equal(stub.body.error?.code, -32030);
      // And in the token mode (permissionless's ERC-20 context): the same check, before any simulation.
      const token = await rpcV2(app, 'pm_getPaymasterData', [
        hexWire({ sender: eoa.address, nonce: 0n, callData: '0x', ...gas, ...fees, signature: '0x' }),
        entryPoint(),
        toHex(fx.chain.chainId),
        { token: fx.tokens[0]?.address },
      ]);
      assert.equal(token.body.error?.code, -32030, JSON.stringify(token.body));
      assert.match(token.body.error?.message ?? '', /EIP-7702 delegate .* is not sponsored/);
    });

    test('a sender with no code, no initCode and no eip7702Auth is refused (-32602 naming the sender)', async () => {
      const eoa = privateKeyToAccount(testKey(`7702-${version}-bare`));
      const r = await ask({ sender: eoa.address, nonce: 0n, callData: '0x', ...gas, ...fees, signature: '0x' });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, -32602);
      assert.match(r.body.error?.message ?? '', /params\[0\]\.sender: has no code.*AA20/);
    });

    test('a delegated op with an allowed delegate executes, the deposit paying its actualGasCost', async () => {
      const { account } = await simple7702('plain');
      const signed = await sponsoredOp(account);
      const before = await deposit();
      const counter = await counterValue(fx);
      const hash = await fx.bundler.writeContract({
        address: entryPoint(),
        abi,
        functionName: 'handleOps',
        args: [[toPackedUserOperation(signed)], fx.bundler.account.address],
        gas: 3_000_000n,
      });
      const receipt = await waitForSuccess(fx.client, hash, 'handleOps');
      const [event] = parseEventLogs({ abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
      assert.equal(event?.args.success, true);
      assert.equal(before - (await deposit()), event?.args.actualGasCost);
      assert.equal(await counterValue(fx), counter + 1n);
    });

    test('sponsored, then re-delegated to its own code before inclusion: AA34 on chain, the deposit pays nothing', async () => {
      const { eoa, account } = await simple7702('redelegated');
      const signed = await sponsoredOp(account);
      // After Patron signed: the EOA re-delegates to code that validates anything and burns the gas.
      await delegate(eoa, burner);
      const packed = toPackedUserOperation(signed);
      const before = await deposit();
      const bundlerBefore = await fx.client.getBalance({ address: fx.bundler.account.address });
      // What a bundler's check sees: the paymaster's signature no longer holds for the sender's code.
      let reason: unknown;
      try {
        await fx.bundler.simulateContract({
          address: entryPoint(),
          abi,
          functionName: 'handleOps',
          args: [[packed], fx.bundler.account.address],
        });
      } catch (err) {
        reason = revertOf(err).args[1];
      }
      assert.equal(reason, 'AA34 signature error');
      // The attacker includes it anyway: the transaction reverts, its own ETH pays for it, the deposit nothing.
      const hash = await fx.bundler.writeContract({
        address: entryPoint(),
        abi,
        functionName: 'handleOps',
        args: [[packed], fx.bundler.account.address],
        gas: 3_000_000n,
      });
      const receipt = await fx.client.waitForTransactionReceipt({ hash });
      assert.equal(receipt.status, 'reverted');
      assert.equal(await deposit(), before, 'the deposit paid nothing');
      assert.ok((await fx.client.getBalance({ address: fx.bundler.account.address })) < bundlerBefore);
      // The signature was over the Simple7702Account delegation's code hash, which is what changed.
      assert.notEqual(
        keccak256((await fx.client.getCode({ address: eoa.address })) ?? '0x'),
        keccak256(concat(['0xef0100', fx.simple7702Accounts[version]])),
      );
    });
  });
}
