import assert from 'node:assert/strict';
import { type Address, type Hash, type Hex, isAddressEqual, parseEventLogs, zeroAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../../src/chain/artifacts.js';
import type { DevClient } from '../../src/chain/devClient.js';
import { KEYS, revertOf } from './patronPaymasterV06.js';

/**
 * The signer set's behaviour, the same on both paymaster contracts (their signer functions share one ABI): a key
 * rotated with an overlap, each step checked with a real op through handleOps (`sponsoredBy` signs one with the
 * key and returns the EntryPoint's verdict: 'ok' or the AA34 reason).
 */
export async function checkSignerRotation(args: {
  readonly owner: DevClient;
  readonly stranger: DevClient;
  readonly paymaster: Address;
  readonly sponsoredBy: (key: Hex) => Promise<string>;
  readonly aa34: string;
}): Promise<void> {
  const { owner, paymaster, sponsoredBy, aa34 } = args;
  const contract = { address: paymaster, abi: patronPaymasterAbi } as const;
  const oldSigner = privateKeyToAccount(KEYS.signer).address;
  const newSigner = privateKeyToAccount(KEYS.stranger).address;
  const signers = () => owner.readContract({ ...contract, functionName: 'signers' });
  const send = async (client: DevClient, functionName: 'addSigner' | 'removeSigner', signer: Address) => {
    const hash: Hash = await client.writeContract({ ...contract, functionName, args: [signer] });
    const receipt = await client.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, 'success');
    return parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs });
  };
  const revert = (client: DevClient, functionName: 'addSigner' | 'removeSigner', signer: Address) =>
    client
      .writeContract({ ...contract, functionName, args: [signer] })
      .then(() => assert.fail('should revert'), revertOf);

  assert.deepEqual(await signers(), [oldSigner]);
  assert.equal(await sponsoredBy(KEYS.signer), 'ok');
  assert.equal(await sponsoredBy(KEYS.stranger), aa34, 'a key never added is refused');

  // Only the owner, never twice, never the zero address.
  assert.deepEqual(await revert(args.stranger, 'addSigner', newSigner), {
    errorName: 'OwnableUnauthorizedAccount',
    args: [args.stranger.account.address],
  });
  assert.deepEqual(await revert(owner, 'addSigner', zeroAddress), { errorName: 'ZeroAddress', args: [] });
  assert.deepEqual(await revert(owner, 'addSigner', oldSigner), { errorName: 'SignerAlreadyAdded', args: [oldSigner] });

  // Step 1: the new key beside the old one: both sign valid data.
  const added = await send(owner, 'addSigner', newSigner);
  assert.ok(added.some((e) => e.eventName === 'SignerAdded' && isAddressEqual(e.args.signer, newSigner)));
  assert.equal(await sponsoredBy(KEYS.signer), 'ok', 'the old key stays valid during the overlap');
  assert.equal(await sponsoredBy(KEYS.stranger), 'ok', 'the new key is valid from the next block');
  assert.equal(await owner.readContract({ ...contract, functionName: 'isSigner', args: [newSigner] }), true);

  // Step 3: the old key removed: what it signs fails, the new key goes on.
  assert.deepEqual(await revert(args.stranger, 'removeSigner', oldSigner), {
    errorName: 'OwnableUnauthorizedAccount',
    args: [args.stranger.account.address],
  });
  const removed = await send(owner, 'removeSigner', oldSigner);
  assert.ok(removed.some((e) => e.eventName === 'SignerRemoved' && isAddressEqual(e.args.signer, oldSigner)));
  assert.equal(await sponsoredBy(KEYS.signer), aa34);
  assert.equal(await sponsoredBy(KEYS.stranger), 'ok');
  assert.deepEqual(await signers(), [newSigner]);
  assert.deepEqual(await revert(owner, 'removeSigner', oldSigner), { errorName: 'NotASigner', args: [oldSigner] });

  // The last key may go: the owner's emergency stop, after which nothing validates.
  await send(owner, 'removeSigner', newSigner);
  assert.deepEqual(await signers(), []);
  assert.equal(await sponsoredBy(KEYS.stranger), aa34);
}
