import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Address,
  concat,
  domainSeparator,
  encodeFunctionData,
  getAddress,
  parseAbi,
  parseEther,
  parseEventLogs,
} from 'viem';
import { entryPoint09Abi, getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { loadAccountAbstractionArtifact } from '../src/chain/aaArtifacts.js';
import { createDevClient, type DevClient, waitForSuccess } from '../src/chain/devClient.js';
import { createEmbeddedChain } from '../src/chain/embeddedChain.js';
import { deployEntryPoint, ENTRY_POINT_ADDRESSES, ENTRY_POINT_VERSIONS } from '../src/chain/entryPoints.js';

const deployer = privateKeyToAccount('0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba');
const owner = privateKeyToAccount('0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6');

const factoryAbi = parseAbi([
  'function getAddress(address owner, uint256 salt) view returns (address)',
  'function createAccount(address owner, uint256 salt) returns (address)',
]);
const accountAbi = parseAbi(['function execute(address dest, uint256 value, bytes func)']);

async function freshClient(): Promise<DevClient> {
  const chain = await createEmbeddedChain({ fundedAccounts: [deployer.address] });
  return createDevClient({ chain, account: deployer });
}

async function deployFactoryV09(client: DevClient, entryPoint: Address): Promise<Address> {
  const { abi, bytecode } = loadAccountAbstractionArtifact('0.9', 'SimpleAccountFactory');
  const hash = await client.deployContract({ abi, bytecode, args: [entryPoint] });
  const receipt = await waitForSuccess(client, hash, 'SimpleAccountFactory v0.9 deployment');
  assert.ok(receipt.contractAddress);
  return getAddress(receipt.contractAddress);
}

describe('EntryPoints at their canonical addresses', () => {
  it('deploys every version, idempotently', async () => {
    const client = await freshClient();
    for (const version of ENTRY_POINT_VERSIONS) {
      assert.equal(await deployEntryPoint(client, version), ENTRY_POINT_ADDRESSES[version]);
      const code = await client.getCode({ address: ENTRY_POINT_ADDRESSES[version] });
      assert.ok(code !== undefined && code.length > 2, `v${version} has code`);
    }
    const block = await client.getBlockNumber();
    for (const version of ENTRY_POINT_VERSIONS) await deployEntryPoint(client, version);
    assert.equal(await client.getBlockNumber(), block, 'the second round sends no transaction');
  });

  it('v0.9 (moved by setCode) deploys an account through initCode and executes its call via handleOps', async () => {
    const client = await freshClient();
    const entryPoint = await deployEntryPoint(client, '0.9');
    const factory = await deployFactoryV09(client, entryPoint);
    const sender = await client.readContract({
      address: factory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args: [owner.address, 7n],
    });
    await client.setBalance({ address: sender, value: parseEther('1') });
    const recipient: Address = '0x00000000000000000000000000000000000000b0';
    const chainId = await client.getChainId();
    const unsigned: UserOperation<'0.9'> = {
      sender,
      nonce: 0n,
      factory,
      factoryData: encodeFunctionData({ abi: factoryAbi, functionName: 'createAccount', args: [owner.address, 7n] }),
      callData: encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [recipient, 12345n, '0x'] }),
      callGasLimit: 100_000n,
      verificationGasLimit: 500_000n,
      preVerificationGas: 60_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      signature: '0x',
    };
    const expectedHash = getUserOperationHash({
      chainId,
      entryPointAddress: entryPoint,
      entryPointVersion: '0.9',
      userOperation: unsigned,
    });
    const packed = {
      sender,
      nonce: 0n,
      initCode: concat([factory, unsigned.factoryData ?? '0x']),
      callData: unsigned.callData,
      accountGasLimits: concat([
        `0x${(500_000).toString(16).padStart(32, '0')}`,
        `0x${(100_000).toString(16).padStart(32, '0')}`,
      ]),
      preVerificationGas: 60_000n,
      gasFees: concat([
        `0x${(1_000_000_000).toString(16).padStart(32, '0')}`,
        `0x${(2_000_000_000).toString(16).padStart(32, '0')}`,
      ]),
      paymasterAndData: '0x',
      signature: '0x',
    } as const;
    const onChainHash = await client.readContract({
      address: entryPoint,
      abi: entryPoint09Abi,
      functionName: 'getUserOpHash',
      args: [packed],
    });
    assert.equal(onChainHash, expectedHash, "getUserOpHash at the canonical address equals viem's");
    const cached = await client.readContract({
      address: entryPoint,
      abi: parseAbi(['function getDomainSeparatorV4() view returns (bytes32)']),
      functionName: 'getDomainSeparatorV4',
    });
    const domain = { name: 'ERC4337', version: '1', chainId, verifyingContract: entryPoint } as const;
    assert.equal(cached, domainSeparator({ domain }), 'the cached EIP-712 separator names the canonical address');
    const signature = await owner.sign({ hash: expectedHash });
    const hash = await client.writeContract({
      address: entryPoint,
      abi: entryPoint09Abi,
      functionName: 'handleOps',
      args: [[{ ...packed, signature }], deployer.address],
      gas: 2_000_000n,
    });
    const receipt = await waitForSuccess(client, hash, 'handleOps');
    const [event] = parseEventLogs({ abi: entryPoint09Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
    assert.ok(event, 'a UserOperationEvent');
    assert.equal(event.args.success, true);
    assert.equal(event.args.userOpHash, expectedHash);
    const deployed = parseEventLogs({ abi: entryPoint09Abi, logs: receipt.logs, eventName: 'AccountDeployed' });
    assert.equal(deployed.length, 1, 'the account was deployed through the patched SenderCreator');
    assert.equal(await client.getBalance({ address: recipient }), 12345n);
  });
});
