import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MEEVersion } from '@biconomy/abstractjs';
import {
  type Address,
  concat,
  createClient,
  decodeFunctionData,
  encodeFunctionData,
  type Hex,
  keccak256,
  pad,
  parseAbi,
  slice,
} from 'viem';
import { toCoinbaseSmartAccount } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { SOLADY_ERC1967_PROXY_CODE_HASH } from '../src/chain/canonicalAccounts.js';
import { COINBASE_SMART_WALLET } from '../src/chain/coinbaseSmartWallet.js';
import { NEXUS } from '../src/chain/nexusAccounts.js';
import { createChainReads } from '../src/chain/senderCode.js';
import { DEFAULT_EIP7702_DELEGATES } from '../src/config/eip7702Delegates.js';
import { ERC1967_IMPLEMENTATION_SLOT, knownAccountsOf, resolveSenderAccount } from '../src/policies/knownAccounts.js';
import { offlineNexusAccount, offlineTransport } from './helpers/offlineSdkAccounts.js';
import { fixtureChainRuntime, type PatronFixture, startPatronFixture, testKey } from './helpers/patronPaymasterV06.js';

/**
 * Nexus and Coinbase Smart Wallet senders resolved over the dev chain's real reads. Their bytecode is in no npm
 * package, so no account runs here: what is proven is how Patron recognises them (the SDKs' own initCode, an
 * EIP-7702 delegation to a Nexus implementation, Solady's ERC-1967 proxy in front of Coinbase's implementation).
 */
let fx: PatronFixture;
before(async () => {
  fx = await startPatronFixture();
});
after(() => fx.close());

const reads = createChainReads({ maxEntries: 100 });
const resolve = (op: { sender: Address; initCode?: Hex; eip7702Auth?: { address: Address } }) =>
  resolveSenderAccount({
    chain: fixtureChainRuntime(fx),
    reads,
    known: knownAccountsOf(fixtureChainRuntime(fx)),
    op: { initCode: '0x', ...op },
  });
const owner = privateKeyToAccount(testKey('nexus-coinbase-owner'));
const fresh = (label: string) => privateKeyToAccount(testKey(label)).address;

/** Solady LibClone's ERC-1967 proxy runtime, as createDeterministicERC1967 lays it out (Solady c4c9660). */
const SOLADY_ERC1967_RUNTIME: Hex =
  '0x363d3d373d3d363d7f360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc545af43d6000803e6038573d6000fd5b3d6000f3';

describe('Nexus', () => {
  test("an undeployed sender with abstractjs's initCode is known by its factory: 1.2.0 and 1.3", async () => {
    for (const [version, kind, label] of [
      [MEEVersion.V2_0_0, 'nexusV12', 'nexus-v12'],
      [MEEVersion.V2_1_0, 'nexusV12', 'nexus-v12b'],
      [MEEVersion.V2_2_1, 'nexusV13', 'nexus-v13'],
    ] as const) {
      const sender = fresh(label);
      const account = await offlineNexusAccount({ version, owner, address: sender });
      assert.deepEqual(await resolve({ sender, initCode: account.getInitCode() }), { known: true, kind }, version);
    }
  });

  test('a factory data whose bootstrap Patron does not know is unknown, naming the bootstrap', async () => {
    const sender = fresh('nexus-evil-bootstrap');
    const account = await offlineNexusAccount({ version: MEEVersion.V2_2_1, owner, address: sender });
    const initCode = account.getInitCode();
    const [factory, data] = [slice(initCode, 0, 20), slice(initCode, 20)];
    const abi = parseAbi(['function createAccount(bytes initData, bytes32 salt)']);
    const evil = fresh('evil-bootstrap');
    const [initData, salt] = decodeFunctionData({ abi, data }).args;
    const swapped = concat([pad(evil), slice(initData, 32)]);
    const evilInit = concat([
      factory,
      encodeFunctionData({ abi, functionName: 'createAccount', args: [swapped, salt] }),
    ]);
    const r = await resolve({ sender, initCode: evilInit });
    assert.ok(!r.known);
    assert.match(r.found.reason, /Nexus bootstrap Patron does not know/);
    assert.equal(r.found.implementation, evil);
    const garbled = await resolve({ sender, initCode: concat([factory, '0x1234']) });
    assert.ok(!garbled.known && /cannot read/.test(garbled.found.reason));
  });

  test('an EOA delegated (EIP-7702) to a Nexus implementation is known, by its code or its authorization', async () => {
    for (const [implementation, kind, label] of [
      [NEXUS.v12.implementations[0], 'nexusV12', '7702-nexus-v12'],
      [NEXUS.v13.implementations[0], 'nexusV13', '7702-nexus-v13'],
    ] as const) {
      const eoa = fresh(label);
      assert.deepEqual(await resolve({ sender: eoa, eip7702Auth: { address: implementation } }), { known: true, kind });
      await fx.client.setCode({ address: eoa, bytecode: concat(['0xef0100', implementation]) });
      assert.deepEqual(await resolve({ sender: eoa }), { known: true, kind });
    }
  });
});

describe('Coinbase Smart Wallet', () => {
  test("an undeployed sender with viem's initCode (v1 and v1.1) is known by its factory", async () => {
    const client = createClient({ transport: offlineTransport() });
    for (const version of ['1', '1.1'] as const) {
      const sender = fresh(`coinbase-${version}`);
      const account = await toCoinbaseSmartAccount({ client, owners: [owner], version, address: sender });
      const { factory, factoryData } = await account.getFactoryArgs();
      assert.ok(factory !== undefined && factoryData !== undefined);
      const initCode = concat([factory, factoryData]);
      assert.deepEqual(await resolve({ sender, initCode }), { known: true, kind: 'coinbaseSmartWallet' }, version);
    }
  });

  test("a deployed one: Solady's ERC-1967 proxy (the listed hash) whose slot names a Coinbase implementation", async () => {
    assert.equal(keccak256(SOLADY_ERC1967_RUNTIME), SOLADY_ERC1967_PROXY_CODE_HASH);
    for (const [i, implementation] of COINBASE_SMART_WALLET.implementations.entries()) {
      const sender = fresh(`coinbase-deployed-${i}`);
      await fx.client.setCode({ address: sender, bytecode: SOLADY_ERC1967_RUNTIME });
      await fx.client.setStorageAt({ address: sender, index: ERC1967_IMPLEMENTATION_SLOT, value: pad(implementation) });
      assert.deepEqual(await resolve({ sender }), { known: true, kind: 'coinbaseSmartWallet' });
    }
  });
});

test('every Nexus implementation abstractjs delegates to is an EIP-7702 delegate Patron sponsors by default', () => {
  const defaults = new Set(DEFAULT_EIP7702_DELEGATES.map((a) => a.toLowerCase()));
  for (const a of [...NEXUS.v12.implementations, ...NEXUS.v13.implementations]) {
    assert.ok(defaults.has(a.toLowerCase()), a);
  }
});
