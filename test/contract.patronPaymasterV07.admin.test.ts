import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Address,
  type Hash,
  isAddressEqual,
  parseEther,
  parseEventLogs,
  toFunctionSelector,
  zeroAddress,
} from 'viem';
import { entryPoint09Abi } from 'viem/account-abstraction';
import { deployPatronPaymasterV07, patronPaymasterV07Abi } from '../src/chain/deployPatronPaymasterV07.js';
import type { DevClient } from '../src/chain/devClient.js';
import { ENTRY_POINT_ADDRESSES } from '../src/chain/entryPoints.js';
import { revertOf } from './helpers/patronPaymasterV06.js';
import {
  AA34,
  buildDeployingOp,
  failedOpReason,
  latestTimestamp,
  signAccount,
  signPaymaster,
  useV07Chain,
  VERSIONS,
} from './helpers/patronPaymasterV07.js';
import { checkSignerRotation } from './helpers/signerSetChecks.js';

/** Ownership, signer rotation, deposit and stake of PatronPaymasterV07: the owner-only surface, per EntryPoint. */
for (const version of VERSIONS) {
  describe(`PatronPaymasterV07 administration (EntryPoint v${version})`, () => {
    const chain = useV07Chain(version);
    const recipient: Address = '0x000000000000000000000000000000000000f00d';

    type Write = (client: DevClient) => Promise<Hash>;
    const paymaster = () => ({ address: chain.fx.paymaster, abi: patronPaymasterV07Abi }) as const;

    /** Sends a paymaster call and waits for success; a revert surfaces decoded (writeContract estimates first). */
    async function send(client: DevClient, write: Write) {
      const receipt = await client.waitForTransactionReceipt({ hash: await write(client) });
      assert.equal(receipt.status, 'success');
      return receipt;
    }

    async function revertWith(client: DevClient, write: Write) {
      return write(client).then(() => assert.fail('the call should revert'), revertOf);
    }

    const read = <F extends 'owner' | 'pendingOwner' | 'getDeposit' | 'feeReceiver'>(functionName: F) =>
      chain.fx.client.readContract({ address: chain.fx.paymaster, abi: patronPaymasterV07Abi, functionName });

    async function sponsoredBy(key: `0x${string}`): Promise<string> {
      const now = await latestTimestamp(chain.fx);
      const op = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), {
        validUntil: now + 600,
        validAfter: 0,
        key,
      });
      return failedOpReason(chain.fx, await signAccount(chain.fx, op));
    }

    it('refuses every owner-only function to anyone else (OwnableUnauthorizedAccount)', async () => {
      const who = chain.fx.stranger.account.address;
      const calls: Array<[string, Write]> = [
        ['addSigner', (c) => c.writeContract({ ...paymaster(), functionName: 'addSigner', args: [who] })],
        ['setFeeReceiver', (c) => c.writeContract({ ...paymaster(), functionName: 'setFeeReceiver', args: [who] })],
        ['withdrawTo', (c) => c.writeContract({ ...paymaster(), functionName: 'withdrawTo', args: [who, 1n] })],
        [
          'addStake',
          (c) => c.writeContract({ ...paymaster(), functionName: 'addStake', args: [86_400], value: parseEther('1') }),
        ],
        ['unlockStake', (c) => c.writeContract({ ...paymaster(), functionName: 'unlockStake' })],
        ['withdrawStake', (c) => c.writeContract({ ...paymaster(), functionName: 'withdrawStake', args: [who] })],
        [
          'transferOwnership',
          (c) => c.writeContract({ ...paymaster(), functionName: 'transferOwnership', args: [who] }),
        ],
      ];
      for (const [label, call] of calls) {
        assert.deepEqual(
          await revertWith(chain.fx.stranger, call),
          { errorName: 'OwnableUnauthorizedAccount', args: [who] },
          label,
        );
      }
      const renounce = await chain.fx.client
        .readContract({ ...paymaster(), functionName: 'renounceOwnership', account: who })
        .then(() => undefined, revertOf);
      assert.deepEqual(renounce, { errorName: 'OwnableUnauthorizedAccount', args: [who] });
    });

    it(`rotates the signer with an overlap: add the new key, both accepted, remove the old (${AA34})`, async () => {
      await checkSignerRotation({
        owner: chain.fx.client,
        stranger: chain.fx.stranger,
        paymaster: chain.fx.paymaster,
        sponsoredBy,
        aa34: AA34,
      });
    });

    it('sets the fee receiver (owner only, event), the owner being the first one', async () => {
      assert.ok(isAddressEqual(await read('feeReceiver'), chain.fx.client.account.address));
      const receipt = await send(chain.fx.client, (c) =>
        c.writeContract({ ...paymaster(), functionName: 'setFeeReceiver', args: [recipient] }),
      );
      const [event] = parseEventLogs({
        abi: patronPaymasterV07Abi,
        eventName: 'FeeReceiverChanged',
        logs: receipt.logs,
      });
      assert.ok(event !== undefined && isAddressEqual(event.args.newReceiver, recipient));
      assert.ok(isAddressEqual(await read('feeReceiver'), recipient));
    });

    it('refuses zero addresses: signer, fee receiver, and at deployment', async () => {
      for (const functionName of ['addSigner', 'setFeeReceiver'] as const) {
        const err = await revertWith(chain.fx.client, (c) =>
          c.writeContract({ ...paymaster(), functionName, args: [zeroAddress] }),
        );
        assert.deepEqual(err, { errorName: 'ZeroAddress', args: [] }, functionName);
      }
      const deploy = (overrides: { entryPoint?: Address; owner?: Address; verifyingSigner?: Address }) =>
        deployPatronPaymasterV07({
          client: chain.fx.client,
          entryPoint: chain.fx.entryPoint,
          owner: chain.fx.client.account.address,
          verifyingSigner: chain.fx.client.account.address,
          ...overrides,
        });
      // viem does not decode constructor reverts; the revert data starts with the error's selector.
      const rejectsWith = (signature: string) => (err: Error) => err.message.includes(toFunctionSelector(signature));
      await assert.rejects(deploy({ verifyingSigner: zeroAddress }), rejectsWith('ZeroAddress()'));
      await assert.rejects(deploy({ entryPoint: zeroAddress }), rejectsWith('ZeroAddress()'));
      await assert.rejects(deploy({ owner: zeroAddress }), rejectsWith('OwnableInvalidOwner(address)'));
    });

    it('refuses an EntryPoint that is not a canonical v0.7, v0.8 or v0.9 (the penalty rule would be unknown)', async () => {
      await assert.rejects(
        deployPatronPaymasterV07({
          client: chain.fx.client,
          entryPoint: ENTRY_POINT_ADDRESSES['0.6'],
          owner: chain.fx.client.account.address,
          verifyingSigner: chain.fx.client.account.address,
        }),
        (err: Error) => err.message.includes(toFunctionSelector('UnsupportedEntryPoint(address)')),
      );
    });

    it('transfers ownership in two steps (Ownable2Step)', async () => {
      const owner = chain.fx.client.account.address;
      const next = chain.fx.stranger.account.address;
      await send(chain.fx.client, (c) =>
        c.writeContract({ ...paymaster(), functionName: 'transferOwnership', args: [next] }),
      );
      assert.ok(isAddressEqual(await read('owner'), owner), 'the owner stays until the new one accepts');
      assert.ok(isAddressEqual(await read('pendingOwner'), next));
      assert.deepEqual(
        await revertWith(chain.fx.bundler, (c) => c.writeContract({ ...paymaster(), functionName: 'acceptOwnership' })),
        { errorName: 'OwnableUnauthorizedAccount', args: [chain.fx.bundler.account.address] },
      );
      await send(chain.fx.stranger, (c) => c.writeContract({ ...paymaster(), functionName: 'acceptOwnership' }));
      assert.ok(isAddressEqual(await read('owner'), next));
      assert.equal(await read('pendingOwner'), zeroAddress);
      assert.deepEqual(
        await revertWith(chain.fx.client, (c) =>
          c.writeContract({ ...paymaster(), functionName: 'addSigner', args: [owner] }),
        ),
        { errorName: 'OwnableUnauthorizedAccount', args: [owner] },
      );
      await send(chain.fx.stranger, (c) =>
        c.writeContract({ ...paymaster(), functionName: 'addSigner', args: [owner] }),
      );
    });

    it('refuses renounceOwnership (the deposit would be stranded)', async () => {
      const err = await chain.fx.client
        .readContract({ ...paymaster(), functionName: 'renounceOwnership', account: chain.fx.client.account })
        .then(() => undefined, revertOf);
      assert.deepEqual(err, { errorName: 'RenounceOwnershipDisabled', args: [] });
    });

    it('takes deposits from anyone and withdraws them only to the owner’s order', async () => {
      const before = await read('getDeposit');
      await send(chain.fx.stranger, (c) =>
        c.writeContract({ ...paymaster(), functionName: 'deposit', value: parseEther('2') }),
      );
      assert.equal(await read('getDeposit'), before + parseEther('2'));
      const balanceOf = await chain.fx.client.readContract({
        address: chain.fx.entryPoint,
        abi: entryPoint09Abi,
        functionName: 'balanceOf',
        args: [chain.fx.paymaster],
      });
      assert.equal(balanceOf, before + parseEther('2'), 'getDeposit reads the EntryPoint balance');
      await send(chain.fx.client, (c) =>
        c.writeContract({ ...paymaster(), functionName: 'withdrawTo', args: [recipient, parseEther('3')] }),
      );
      assert.equal(await read('getDeposit'), before - parseEther('1'));
      assert.equal(await chain.fx.client.getBalance({ address: recipient }), parseEther('3'));
    });

    it('adds, unlocks and withdraws the EntryPoint stake', async () => {
      const depositInfo = () =>
        chain.fx.client.readContract({
          address: chain.fx.entryPoint,
          abi: entryPoint09Abi,
          functionName: 'getDepositInfo',
          args: [chain.fx.paymaster],
        });
      await send(chain.fx.client, (c) =>
        c.writeContract({ ...paymaster(), functionName: 'addStake', args: [60], value: parseEther('1') }),
      );
      const staked = await depositInfo();
      assert.equal(staked.staked, true);
      assert.equal(staked.stake, parseEther('1'));
      assert.equal(staked.unstakeDelaySec, 60);
      await send(chain.fx.client, (c) => c.writeContract({ ...paymaster(), functionName: 'unlockStake' }));
      await chain.fx.client.increaseTime({ seconds: 61 });
      await chain.fx.client.mine({ blocks: 1 });
      await send(chain.fx.client, (c) =>
        c.writeContract({ ...paymaster(), functionName: 'withdrawStake', args: [recipient] }),
      );
      assert.equal((await depositInfo()).stake, 0n);
      assert.equal(await chain.fx.client.getBalance({ address: recipient }), parseEther('1'));
    });
  });
}
