import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { toSafeSmartAccount, toSimpleSmartAccount } from 'permissionless/accounts';
import {
  type Address,
  createPublicClient,
  custom,
  type Hex,
  type PublicClient,
  parseAbi,
  parseEther,
  parseEventLogs,
} from 'viem';
import {
  entryPoint07Abi,
  entryPoint07Address,
  entryPoint08Abi,
  entryPoint08Address,
  type SmartAccount,
  toPackedUserOperation,
  type UserOperation,
} from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { SIMPLE_ACCOUNT_ADDRESSES } from '../src/chain/accountFactories.js';
import { patronPaymasterV07Abi } from '../src/chain/deployPatronPaymasterV07.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import { type DevChain, startDevChain } from '../src/chain/embeddedChain.js';
import { ENTRY_POINT_ADDRESSES } from '../src/chain/entryPoints.js';
import { SAFE_4337_ADDRESSES } from '../src/chain/safe4337.js';

const deployerKey: Hex = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const owner = privateKeyToAccount('0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6');
const recipient: Address = '0x00000000000000000000000000000000000000b0';

const factoryAbi = parseAbi([
  'function getAddress(address owner, uint256 salt) view returns (address)',
  'function createAccount(address owner, uint256 salt) returns (address)',
]);

let dev: DevChain;
/** What the SDKs get: a plain public client of the dev chain (permissionless types its client without an account). */
let sdkClient: PublicClient;
before(async () => {
  dev = await startDevChain({
    signerAddress: owner.address,
    ownerPrivateKey: deployerKey,
    depositWei: parseEther('1'),
  });
  sdkClient = createPublicClient({ chain: dev.client.chain, transport: custom(dev.chain, { retryCount: 0 }) });
});
after(() => dev.close());

/**
 * Builds, signs and executes one op of `account` through handleOps with generous fixed limits (no paymaster;
 * the account is funded with ETH first), and returns the UserOperationEvent's `success`.
 */
async function executeOp(account: SmartAccount, value: bigint): Promise<boolean> {
  const client = dev.client;
  await client.setBalance({ address: account.address, value: parseEther('1') });
  const op = {
    sender: account.address,
    nonce: await account.getNonce(),
    ...(await account.getFactoryArgs()),
    callData: await account.encodeCalls([{ to: recipient, value, data: '0x' }]),
    callGasLimit: 300_000n,
    verificationGasLimit: 1_000_000n,
    preVerificationGas: 100_000n,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    signature: '0x',
  } as UserOperation<'0.7'>;
  op.signature = await account.signUserOperation(op);
  const abi = account.entryPoint.version === '0.8' ? entryPoint08Abi : entryPoint07Abi;
  const hash = await client.writeContract({
    address: account.entryPoint.address,
    abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation(op)], client.account.address],
    gas: 3_000_000n,
  });
  const receipt = await waitForSuccess(client, hash, 'handleOps');
  const [event] = parseEventLogs({ abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  assert.ok(event, 'a UserOperationEvent');
  return event.args.success;
}

describe('dev chain: EntryPoints v0.6-v0.9 and what SDKs default to', () => {
  it('has code at every canonical address, and describes it', async () => {
    assert.deepEqual(dev.entryPoints, ENTRY_POINT_ADDRESSES);
    assert.equal(dev.entryPoints['0.6'], dev.entryPoint);
    assert.equal(dev.paymasters['0.6'], dev.paymaster);
    // Patron's paymaster per version: serving that EntryPoint, with the same deposit as v0.6's.
    for (const version of ['0.7', '0.8', '0.9'] as const) {
      const paymaster = dev.paymasters[version];
      const abi = patronPaymasterV07Abi;
      assert.equal(
        await dev.client.readContract({ address: paymaster, abi, functionName: 'entryPoint' }),
        dev.entryPoints[version],
      );
      assert.equal(
        await dev.client.readContract({ address: paymaster, abi, functionName: 'getDeposit' }),
        parseEther('1'),
      );
      assert.deepEqual(await dev.client.readContract({ address: paymaster, abi, functionName: 'signers' }), [
        owner.address,
      ]);
    }
    const addresses: Address[] = [
      ...Object.values(dev.entryPoints),
      ...Object.values(dev.simpleAccountFactories),
      ...Object.values(dev.simple7702Accounts),
      ...Object.values(dev.safe4337),
      ...Object.values(SIMPLE_ACCOUNT_ADDRESSES),
      ...Object.values(SAFE_4337_ADDRESSES),
    ];
    for (const address of addresses) {
      const code = await dev.client.getCode({ address });
      assert.ok(code !== undefined && code.length > 2, `code at ${address}`);
    }
  });

  it('SimpleAccountFactory v0.7: getAddress and createAccount agree (anyone may call createAccount)', async () => {
    const factory = dev.simpleAccountFactories['0.7'];
    const args = [owner.address, 3n] as const;
    const predicted = await dev.client.readContract({
      address: factory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args,
    });
    const hash = await dev.client.writeContract({
      address: factory,
      abi: factoryAbi,
      functionName: 'createAccount',
      args,
    });
    await waitForSuccess(dev.client, hash, 'createAccount');
    const code = await dev.client.getCode({ address: predicted });
    assert.ok(code !== undefined && code.length > 2);
  });

  for (const version of ['0.7', '0.8'] as const) {
    it(`SimpleAccount v${version} (permissionless defaults): deploys through initCode and pays ETH`, async () => {
      const entryPoint = version === '0.7' ? entryPoint07Address : entryPoint08Address;
      const account = await toSimpleSmartAccount({
        client: sdkClient,
        owner,
        index: 11n,
        entryPoint: { address: entryPoint, version },
      });
      const predicted = await dev.client.readContract({
        address: dev.simpleAccountFactories[version],
        abi: factoryAbi,
        functionName: 'getAddress',
        args: [owner.address, 11n],
      });
      assert.equal(account.address, predicted, "the SDK's default factory is the dev chain's");
      const before = await dev.client.getBalance({ address: recipient });
      assert.equal(await executeOp(account, 1000n), true);
      assert.equal(await dev.client.getBalance({ address: recipient }), before + 1000n);
      const code = await dev.client.getCode({ address: account.address });
      assert.ok(code !== undefined && code.length > 2, 'the account was deployed by its op');
    });
  }

  it('Safe 1.4.1 + 4337 module 0.3.0 (permissionless toSafeSmartAccount defaults, EntryPoint v0.7)', async () => {
    const account = await toSafeSmartAccount({
      client: sdkClient,
      owners: [owner],
      version: '1.4.1',
      entryPoint: { address: entryPoint07Address, version: '0.7' },
      saltNonce: 5n,
    });
    assert.equal(await dev.client.getCode({ address: account.address }), undefined);
    const before = await dev.client.getBalance({ address: recipient });
    assert.equal(await executeOp(account, 777n), true);
    assert.equal(await dev.client.getBalance({ address: recipient }), before + 777n);
    const modules = await dev.client.readContract({
      address: account.address,
      abi: parseAbi(['function isModuleEnabled(address module) view returns (bool)']),
      functionName: 'isModuleEnabled',
      args: [SAFE_4337_ADDRESSES.safe4337Module],
    });
    assert.equal(modules, true, 'the 4337 module is enabled on the new Safe');
  });
});
