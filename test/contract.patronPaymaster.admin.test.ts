import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Address, type Hash, type Hex, isAddressEqual, parseEther, toFunctionSelector, zeroAddress } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevClient } from '../src/chain/devClient.js';
import { DEV_PAYMASTER_STAKE, deployPatronPaymaster } from '../src/chain/embeddedChain.js';
import {
  buildDeployingOp,
  failedOpReason,
  latestTimestamp,
  revertOf,
  signAccount,
  signPaymaster,
} from './helpers/patronPaymasterV06.js';
import { checkSignerRotation } from './helpers/signerSetChecks.js';
import { usePatronChain } from './helpers/usePatronChain.js';

/** Ownership, signer rotation, deposit and stake of PatronPaymaster: the owner-only surface. */
describe('PatronPaymaster administration', () => {
  const chain = usePatronChain();
  const recipient: Address = '0x000000000000000000000000000000000000f00d';

  type Write = (client: DevClient) => Promise<Hash>;
  const paymaster = () => ({ address: chain.fx.paymaster, abi: patronPaymasterAbi }) as const;

  /** Sends a paymaster call and waits for success; a revert surfaces decoded (writeContract estimates first). */
  async function send(client: DevClient, write: Write) {
    const receipt = await client.waitForTransactionReceipt({ hash: await write(client) });
    assert.equal(receipt.status, 'success');
    return receipt;
  }

  async function revertWith(client: DevClient, write: Write) {
    return write(client).then(() => assert.fail('the call should revert'), revertOf);
  }

  const read = <F extends 'owner' | 'pendingOwner' | 'getDeposit'>(functionName: F) =>
    chain.fx.client.readContract({ address: chain.fx.paymaster, abi: patronPaymasterAbi, functionName });

  async function sponsoredBy(key: Hex): Promise<string> {
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
      ['withdrawTo', (c) => c.writeContract({ ...paymaster(), functionName: 'withdrawTo', args: [who, 1n] })],
      [
        'addStake',
        (c) => c.writeContract({ ...paymaster(), functionName: 'addStake', args: [86_400], value: parseEther('1') }),
      ],
      ['unlockStake', (c) => c.writeContract({ ...paymaster(), functionName: 'unlockStake' })],
      ['withdrawStake', (c) => c.writeContract({ ...paymaster(), functionName: 'withdrawStake', args: [who] })],
      ['transferOwnership', (c) => c.writeContract({ ...paymaster(), functionName: 'transferOwnership', args: [who] })],
    ];
    for (const [label, call] of calls) {
      assert.deepEqual(
        await revertWith(chain.fx.stranger, call),
        { errorName: 'OwnableUnauthorizedAccount', args: [who] },
        label,
      );
    }
  });

  it('rotates the signer with an overlap: add the new key, both accepted, remove the old (AA34), owner only', async () => {
    await checkSignerRotation({
      owner: chain.fx.client,
      stranger: chain.fx.stranger,
      paymaster: chain.fx.paymaster,
      sponsoredBy,
      aa34: 'AA34 signature error',
    });
  });

  it('refuses the zero address as signer, at deployment and in addSigner', async () => {
    const err = await revertWith(chain.fx.client, (c) =>
      c.writeContract({ ...paymaster(), functionName: 'addSigner', args: [zeroAddress] }),
    );
    assert.deepEqual(err, { errorName: 'ZeroAddress', args: [] });
    const deploy = deployPatronPaymaster({
      client: chain.fx.client,
      entryPoint: chain.fx.entryPoint,
      owner: chain.fx.client.account.address,
      verifyingSigner: zeroAddress,
    });
    // viem does not decode constructor reverts; the revert data is the ZeroAddress() selector.
    await assert.rejects(deploy, (err: Error) => err.message.includes(toFunctionSelector('ZeroAddress()')));
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
      {
        errorName: 'OwnableUnauthorizedAccount',
        args: [chain.fx.bundler.account.address],
      },
    );
    await send(chain.fx.stranger, (c) => c.writeContract({ ...paymaster(), functionName: 'acceptOwnership' }));
    assert.ok(isAddressEqual(await read('owner'), next));
    assert.equal(await read('pendingOwner'), zeroAddress);
    assert.deepEqual(
      await revertWith(chain.fx.client, (c) =>
        c.writeContract({ ...paymaster(), functionName: 'addSigner', args: [owner] }),
      ),
      {
        errorName: 'OwnableUnauthorizedAccount',
        args: [owner],
      },
    );
    await send(chain.fx.stranger, (c) => c.writeContract({ ...paymaster(), functionName: 'addSigner', args: [owner] }));
  });

  it('refuses renounceOwnership (the deposit would be stranded)', async () => {
    const err = await chain.fx.client
      .readContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterAbi,
        functionName: 'renounceOwnership',
        account: chain.fx.client.account,
      })
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
      abi: entryPoint06Abi,
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
        abi: entryPoint06Abi,
        functionName: 'getDepositInfo',
        args: [chain.fx.paymaster],
      });
    // The dev chain stakes its paymasters at deployment (1 ETH, one day), as the token mode needs.
    const initial = await depositInfo();
    assert.equal(initial.staked, true);
    assert.equal(initial.stake, DEV_PAYMASTER_STAKE.wei);
    assert.equal(initial.unstakeDelaySec, DEV_PAYMASTER_STAKE.unstakeDelaySec);
    await send(chain.fx.client, (c) =>
      c.writeContract({
        ...paymaster(),
        functionName: 'addStake',
        args: [DEV_PAYMASTER_STAKE.unstakeDelaySec],
        value: parseEther('1'),
      }),
    );
    const staked = await depositInfo();
    assert.equal(staked.staked, true);
    assert.equal(staked.stake, DEV_PAYMASTER_STAKE.wei + parseEther('1'));
    await send(chain.fx.client, (c) => c.writeContract({ ...paymaster(), functionName: 'unlockStake' }));
    await chain.fx.client.increaseTime({ seconds: DEV_PAYMASTER_STAKE.unstakeDelaySec + 1 });
    await chain.fx.client.mine({ blocks: 1 });
    await send(chain.fx.client, (c) =>
      c.writeContract({ ...paymaster(), functionName: 'withdrawStake', args: [recipient] }),
    );
    assert.equal((await depositInfo()).stake, 0n);
    assert.equal(await chain.fx.client.getBalance({ address: recipient }), DEV_PAYMASTER_STAKE.wei + parseEther('1'));
  });
});
