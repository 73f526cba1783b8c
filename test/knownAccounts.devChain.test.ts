import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Address,
  concat,
  encodeFunctionData,
  getAddress,
  type Hex,
  keccak256,
  pad,
  parseAbi,
  parseEther,
  parseEventLogs,
  zeroAddress,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { BICONOMY_SMART_ACCOUNT_V2 } from '../src/chain/biconomySmartAccountV2.js';
import {
  BICONOMY_PROXY_CODE_HASH,
  CANONICAL_ACCOUNTS,
  devChainKnownAccounts,
  implementationOfFactory,
  KERNEL,
  KERNEL_V2_PROXY_CODE_HASH,
  SAFE_PROXY_CODE_HASH,
  SIMPLE_ACCOUNT_PROXY_CODE_HASHES,
  SOLADY_ERC1967_PROXY_CODE_HASH,
} from '../src/chain/canonicalAccounts.js';
import { createDevClient, waitForSuccess } from '../src/chain/devClient.js';
import { createChainReads } from '../src/chain/senderCode.js';
import { ERC1967_IMPLEMENTATION_SLOT, knownAccountsOf, resolveSenderAccount } from '../src/policies/knownAccounts.js';
import {
  COUNTER_ADDRESS,
  fixtureChainRuntime,
  type PatronFixture,
  startPatronFixture,
  testKey,
} from './helpers/patronPaymasterV06.js';

/**
 * The canonical account facts of src/chain/canonicalAccounts.ts recomputed from the accounts the dev chain really
 * deploys (its factories are the canonical ones byte for byte), and the resolution over real chain reads: each
 * kind of account is recognised from what the chain shows. One chain for the file.
 */
let fx: PatronFixture;
const owner = privateKeyToAccount(testKey('known-accounts-dev-owner')).address;
const factoryAbi = parseAbi([
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
  'function accountImplementation() view returns (address)',
]);

before(async () => {
  fx = await startPatronFixture();
});
after(() => fx.close());

const reads = createChainReads({ maxEntries: 100 });
const resolve = (sender: Address, initCode: Hex = '0x') =>
  resolveSenderAccount({
    chain: fixtureChainRuntime(fx),
    reads,
    known: knownAccountsOf(fixtureChainRuntime(fx)),
    op: { sender, initCode },
  });

/** Deploys a SimpleAccount of the version through its factory (v0.8's only from the EntryPoint's SenderCreator). */
async function simpleAccount(version: '0.6' | '0.7' | '0.8', salt: bigint): Promise<Address> {
  const factory = fx.simpleAccountFactories[version];
  let client = fx.bundler;
  if (version === '0.8') {
    const senderCreator = await fx.client.readContract({
      address: fx.entryPoints['0.8'],
      abi: parseAbi(['function senderCreator() view returns (address)']),
      functionName: 'senderCreator',
    });
    await fx.client.impersonateAccount({ address: senderCreator });
    await fx.client.setBalance({ address: senderCreator, value: parseEther('1') });
    client = createDevClient({ chain: fx.chain, account: { address: senderCreator, type: 'json-rpc' } }) as never;
  }
  const hash = await client.writeContract({
    address: factory,
    abi: factoryAbi,
    functionName: 'createAccount',
    args: [owner, salt],
    chain: null,
    account: client.account,
  });
  await waitForSuccess(fx.client, hash, `SimpleAccount v${version}`);
  return fx.client.readContract({ address: factory, abi: factoryAbi, functionName: 'getAddress', args: [owner, salt] });
}

const codeHash = async (a: Address) => keccak256((await fx.client.getCode({ address: a })) ?? '0x');

describe('the canonical facts, recomputed on the dev chain', () => {
  test('each SimpleAccountFactory deploys CREATE(factory, 1) as implementation, behind the proxy whose hash is listed', async () => {
    for (const version of ['0.6', '0.7', '0.8'] as const) {
      const factory = fx.simpleAccountFactories[version];
      const implementation = await fx.client.readContract({
        address: factory,
        abi: factoryAbi,
        functionName: 'accountImplementation',
      });
      assert.equal(implementation, implementationOfFactory(factory), `v${version}`);
      assert.equal(await codeHash(await simpleAccount(version, 1n)), SIMPLE_ACCOUNT_PROXY_CODE_HASHES[version]);
    }
    // The canonical v0.7 and v0.8 factories are the dev chain's; v0.6's canonical one is listed by address.
    assert.deepEqual(CANONICAL_ACCOUNTS.simpleAccountV07?.factories, [fx.simpleAccountFactories['0.7']]);
    assert.deepEqual(CANONICAL_ACCOUNTS.simpleAccountV08?.factories, [fx.simpleAccountFactories['0.8']]);
    assert.deepEqual(devChainKnownAccounts(fx).simpleAccountV06?.factories, [fx.simpleAccountFactories['0.6']]);
  });

  test("Safe 1.4.1's proxy, Biconomy SA v2's proxy and Solady's ERC-1967 proxy hash as listed", async () => {
    const safe = await deploySafe(fx.safe4337.safe4337Module);
    assert.equal(await codeHash(safe), SAFE_PROXY_CODE_HASH);
    assert.equal(await codeHash(await deployBiconomy()), BICONOMY_PROXY_CODE_HASH);
    const solady: Hex =
      '0x363d3d373d3d363d7f360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc545af43d6000803e6038573d6000fd5b3d6000f3';
    assert.equal(keccak256(solady), SOLADY_ERC1967_PROXY_CODE_HASH);
  });

  test("Kernel 0.2's proxy, assembled from its factory's source, is a working ERC-1967 proxy of the listed hash", async () => {
    const kernelProxy = concat([
      '0x3d3d3373',
      KERNEL.v2Factory,
      '0x14605757363d3d37363d7f360894a13ba1a3210667c828492db98dca3e2076cc',
      '0x3735a920a3ca505d382bbc545af43d6000803e6052573d6000fd5b3d6000f35b',
      '0x3d356020355560408036111560525736038060403d373d3d355af43d6000803e',
      '0x6052573d6000fd',
    ]);
    assert.equal(keccak256(kernelProxy), KERNEL_V2_PROXY_CODE_HASH);
    const proxy = privateKeyToAccount(testKey('kernel-v2-proxy')).address;
    await fx.client.setCode({ address: proxy, bytecode: kernelProxy });
    // Pointed at the counter (a code that increments its own slot 0): a call runs it in the proxy's storage.
    await fx.client.setStorageAt({ address: proxy, index: ERC1967_IMPLEMENTATION_SLOT, value: pad(COUNTER_ADDRESS) });
    await waitForSuccess(fx.client, await fx.bundler.sendTransaction({ to: proxy, data: '0x01' }), 'proxy call');
    assert.equal(await fx.client.getStorageAt({ address: proxy, slot: pad('0x00') }), pad('0x01'));
    await fx.client.setStorageAt({
      address: proxy,
      index: ERC1967_IMPLEMENTATION_SLOT,
      value: pad(KERNEL.v2Implementations[3]),
    });
    assert.deepEqual(await resolve(proxy), { known: true, kind: 'kernelV2' });
  });
});

let safeSalt = 0n;
/** A Safe through the canonical proxy factory, its fallback handler `handler`, the 4337 module enabled. */
async function deploySafe(handler: Address): Promise<Address> {
  const enableModules = encodeFunctionData({
    abi: parseAbi(['function enableModules(address[] modules)']),
    functionName: 'enableModules',
    args: [[fx.safe4337.safe4337Module]],
  });
  const setup = encodeFunctionData({
    abi: parseAbi([
      'function setup(address[] owners, uint256 threshold, address to, bytes data, address fallbackHandler, address paymentToken, uint256 payment, address paymentReceiver)',
    ]),
    functionName: 'setup',
    args: [[owner], 1n, fx.safe4337.safeModuleSetup, enableModules, handler, zeroAddress, 0n, zeroAddress],
  });
  const hash = await fx.bundler.writeContract({
    address: fx.safe4337.proxyFactory,
    abi: parseAbi(['function createProxyWithNonce(address singleton, bytes initializer, uint256 saltNonce)']),
    functionName: 'createProxyWithNonce',
    args: [fx.safe4337.singleton, setup, safeSalt++],
  });
  const receipt = await waitForSuccess(fx.client, hash, 'Safe');
  const [created] = parseEventLogs({
    abi: parseAbi(['event ProxyCreation(address indexed proxy, address singleton)']),
    logs: receipt.logs,
  });
  assert.ok(created);
  return getAddress(created.args.proxy);
}

/** The Biconomy SA v2 account of `owner` (index 0), deployed through the canonical factory once. */
async function deployBiconomy(): Promise<Address> {
  const abi = parseAbi([
    'function deployCounterFactualAccount(address moduleSetupContract, bytes moduleSetupData, uint256 index) returns (address)',
    'function getAddressForCounterFactualAccount(address moduleSetupContract, bytes moduleSetupData, uint256 index) view returns (address)',
  ]);
  const setupData = encodeFunctionData({
    abi: parseAbi(['function initForSmartAccount(address eoaOwner) returns (address)']),
    functionName: 'initForSmartAccount',
    args: [owner],
  });
  const args = [BICONOMY_SMART_ACCOUNT_V2.ecdsaOwnershipModule, setupData, 0n] as const;
  const address = await fx.client.readContract({
    address: BICONOMY_SMART_ACCOUNT_V2.factory,
    abi,
    functionName: 'getAddressForCounterFactualAccount',
    args,
  });
  if ((await fx.client.getCode({ address })) !== undefined) return address;
  const hash = await fx.bundler.writeContract({
    address: BICONOMY_SMART_ACCOUNT_V2.factory,
    abi,
    functionName: 'deployCounterFactualAccount',
    args,
  });
  await waitForSuccess(fx.client, hash, 'Biconomy SA v2');
  return address;
}

describe('resolveSenderAccount over the chain', () => {
  test('deployed SimpleAccounts, a Safe with the 4337 module, Biconomy SA v2 and a Simple7702 EOA are known', async () => {
    assert.deepEqual(await resolve(await simpleAccount('0.6', 2n)), { known: true, kind: 'simpleAccountV06' });
    assert.deepEqual(await resolve(await simpleAccount('0.7', 2n)), { known: true, kind: 'simpleAccountV07' });
    assert.deepEqual(await resolve(await simpleAccount('0.8', 2n)), { known: true, kind: 'simpleAccountV08' });
    assert.deepEqual(await resolve(await deploySafe(fx.safe4337.safe4337Module)), { known: true, kind: 'safe4337' });
    const biconomy = await deployBiconomy();
    assert.deepEqual(await resolve(biconomy), { known: true, kind: 'biconomyV2' });
    const eoa = privateKeyToAccount(testKey('known-accounts-7702'));
    await fx.client.setCode({ address: eoa.address, bytecode: concat(['0xef0100', fx.simple7702Accounts['0.9']]) });
    assert.deepEqual(await resolve(eoa.address), { known: true, kind: 'simpleAccountV08' });
  });

  test('a Safe whose fallback handler is not the 4337 module is unknown (its executeUserOp would be any code)', async () => {
    const handler = privateKeyToAccount(testKey('not-a-module')).address;
    const r = await resolve(await deploySafe(handler));
    assert.ok(!r.known);
    assert.equal(r.found.implementation, handler);
  });

  test('an undeployed sender of the dev chain’s own v0.6 factory is known by that factory', async () => {
    const factory = fx.simpleAccountFactories['0.6'];
    const sender = await fx.client.readContract({
      address: factory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args: [owner, 99n],
    });
    const initCode = concat([
      factory,
      encodeFunctionData({ abi: factoryAbi, functionName: 'createAccount', args: [owner, 99n] }),
    ]);
    assert.deepEqual(await resolve(sender, initCode), { known: true, kind: 'simpleAccountV06' });
  });
});
