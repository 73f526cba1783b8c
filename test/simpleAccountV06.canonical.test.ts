import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPublicClient, custom, keccak256, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { SIMPLE_ACCOUNT_ADDRESSES } from '../src/chain/accountFactories.js';
import { CANONICAL_ACCOUNTS, SIMPLE_ACCOUNT_PROXY_CODE_HASHES } from '../src/chain/canonicalAccounts.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import { createChainReads } from '../src/chain/senderCode.js';
import { knownAccountsOf, resolveSenderAccount } from '../src/policies/knownAccounts.js';
import { fixtureChainRuntime, type PatronFixture, startPatronFixture, testKey } from './helpers/patronPaymasterV06.js';

/**
 * permissionless's `toSimpleSmartAccount` on EntryPoint v0.6 without a factoryAddress uses the canonical
 * SimpleAccountFactory 0x9406…6454: the dev chain has it (the npm 0.6.0 initcode through Arachnid's deployer, salt 0),
 * so that SDK call works unmodified, and its accounts are the known simpleAccountV06 kind.
 */
let fx: PatronFixture;
before(async () => {
  fx = await startPatronFixture();
});
after(() => fx.close());

const factoryAbi = parseAbi([
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
]);

test('the SDK’s default v0.6 factory is on the dev chain, and its counterfactual address is the factory’s', async () => {
  const owner = privateKeyToAccount(testKey('canonical-v06-owner'));
  const account = await toSimpleSmartAccount({
    client: createPublicClient({ chain: fx.client.chain, transport: custom(fx.chain) }),
    owner,
    entryPoint: { address: fx.entryPoints['0.6'], version: '0.6' },
  });
  const { factory } = await account.getFactoryArgs();
  assert.equal(factory, SIMPLE_ACCOUNT_ADDRESSES.factoryV06);
  assert.ok(((await fx.client.getCode({ address: factory })) ?? '0x').length > 2, 'the factory has code');
  const onChain = await fx.client.readContract({
    address: factory,
    abi: factoryAbi,
    functionName: 'getAddress',
    args: [owner.address, 0n],
  });
  assert.equal(await account.getAddress(), onChain);
  assert.deepEqual(CANONICAL_ACCOUNTS.simpleAccountV06?.factories, [factory]);

  const reads = createChainReads({ maxEntries: 10 });
  const resolve = (initCode: `0x${string}`) =>
    resolveSenderAccount({
      chain: fixtureChainRuntime(fx),
      reads,
      known: knownAccountsOf(fixtureChainRuntime(fx)),
      op: { sender: onChain, initCode },
    });
  const { factoryData } = await account.getFactoryArgs();
  assert.deepEqual(await resolve(`${factory}${(factoryData ?? '0x').slice(2)}`), {
    known: true,
    kind: 'simpleAccountV06',
  });
  const hash = await fx.bundler.writeContract({
    address: factory,
    abi: factoryAbi,
    functionName: 'createAccount',
    args: [owner.address, 0n],
    chain: null,
    account: fx.bundler.account,
  });
  await waitForSuccess(fx.client, hash, 'canonical v0.6 SimpleAccount');
  assert.equal(
    keccak256((await fx.client.getCode({ address: onChain })) ?? '0x'),
    SIMPLE_ACCOUNT_PROXY_CODE_HASHES['0.6'],
  );
  assert.deepEqual(
    await createChainReads({ maxEntries: 10 }).code(fixtureChainRuntime(fx), onChain).then(Boolean),
    true,
  );
  assert.deepEqual(
    await resolveSenderAccount({
      chain: fixtureChainRuntime(fx),
      reads: createChainReads({ maxEntries: 10 }),
      known: knownAccountsOf(fixtureChainRuntime(fx)),
      op: { sender: onChain, initCode: '0x' },
    }),
    { known: true, kind: 'simpleAccountV06' },
  );
});
