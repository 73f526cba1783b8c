import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Address,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  keccak256,
  pad,
  parseAbi,
  parseAbiParameters,
  zeroAddress,
} from 'viem';
import { SIMPLE_ACCOUNT_ADDRESSES } from '../chain/accountFactories.js';
import {
  BICONOMY_PROXY_CODE_HASH,
  CANONICAL_ACCOUNTS,
  implementationOfFactory,
  KERNEL,
  SAFE_PROXY_CODE_HASH,
  SIMPLE_ACCOUNT_PROXY_CODE_HASHES,
  SOLADY_ERC1967_PROXY_CODE_HASH,
} from '../chain/canonicalAccounts.js';
import { type ChainRuntime, eip1193ChainRuntime } from '../chain/chainRegistry.js';
import { SAFE_4337_ADDRESSES } from '../chain/safe4337.js';
import { type ChainReads, delegationCodeHash, type SenderCode } from '../chain/senderCode.js';
import { knownAccountsSchema } from '../config/knownAccountsSettings.js';
import {
  ERC1967_IMPLEMENTATION_SLOT,
  knownAccounts,
  knownAccountsOf,
  resolveSenderAccount,
  SAFE_FALLBACK_HANDLER_SLOT,
  type SenderOp,
} from './knownAccounts.js';

/**
 * The resolution's decisions over a scripted chain (code, storage and getSenderAddress answers are the script's):
 * which reads it makes and what it concludes. The same resolution against real accounts on the dev chain is
 * test/knownAccounts.devChain.test.ts and the policy attack tests.
 */
const SENDER: Address = '0x5555555555555555555555555555555555555555';
const EVIL: Address = '0xbad0000000000000000000000000000000000bad';

function scripted(over: { code?: SenderCode; words?: Record<Hex, Hex>; deploys?: Address } = {}) {
  const seen: string[] = [];
  const reads: ChainReads = {
    async code(_chain, address) {
      seen.push(`code ${address}`);
      return address === SENDER ? over.code : undefined;
    },
    async storage(_chain, _address, slot) {
      seen.push(`slot ${slot}`);
      return over.words?.[slot] ?? pad('0x00');
    },
    async senderOfInitCode() {
      seen.push('getSenderAddress');
      return over.deploys;
    },
  };
  return { reads, seen };
}

const chainOf = (version: ChainRuntime['entryPointVersion'] = '0.7'): ChainRuntime => ({
  ...eip1193ChainRuntime({
    chainId: 1,
    request: async () => {
      throw new Error('not used');
    },
    entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
    paymaster: '0x1111111111111111111111111111111111111111',
  }),
  entryPointVersion: version,
});

const resolve = (op: Partial<SenderOp>, s: ReturnType<typeof scripted>, version?: ChainRuntime['entryPointVersion']) =>
  resolveSenderAccount({
    chain: chainOf(version),
    reads: s.reads,
    known: knownAccountsOf({ accounts: undefined }),
    op: { sender: SENDER, initCode: '0x', ...op },
  });

const proxy = (codeHash: Hex): SenderCode => ({ codeHash, delegate: undefined });
const word = (a: Address): Hex => pad(a.toLowerCase() as Hex);

describe('resolveSenderAccount: a deployed sender', () => {
  test('a SimpleAccount v0.7 proxy whose ERC-1967 slot names the canonical implementation', async () => {
    const s = scripted({
      code: proxy(SIMPLE_ACCOUNT_PROXY_CODE_HASHES['0.7']),
      words: { [ERC1967_IMPLEMENTATION_SLOT]: word(implementationOfFactory(SIMPLE_ACCOUNT_ADDRESSES.factoryV07)) },
    });
    assert.deepEqual(await resolve({}, s), { known: true, kind: 'simpleAccountV07' });
    assert.deepEqual(s.seen, [`code ${SENDER}`, `slot ${ERC1967_IMPLEMENTATION_SLOT}`]);
  });

  test('a known proxy whose slot names unknown code is unknown, with both', async () => {
    const s = scripted({
      code: proxy(SIMPLE_ACCOUNT_PROXY_CODE_HASHES['0.7']),
      words: { [ERC1967_IMPLEMENTATION_SLOT]: word(EVIL) },
    });
    const r = await resolve({}, s);
    assert.ok(!r.known);
    assert.equal(r.found.implementation?.toLowerCase(), EVIL);
    assert.equal(r.found.codeHash, SIMPLE_ACCOUNT_PROXY_CODE_HASHES['0.7']);
  });

  test('unknown code is unknown without reading any slot: a slot is only what a known proxy runs', async () => {
    const codeHash = keccak256('0x5b600056');
    const s = scripted({
      code: proxy(codeHash),
      words: { [ERC1967_IMPLEMENTATION_SLOT]: word(implementationOfFactory(SIMPLE_ACCOUNT_ADDRESSES.factoryV07)) },
    });
    const r = await resolve({}, s);
    assert.deepEqual(r, { known: false, found: { reason: 'account code Patron does not know', codeHash } });
    assert.deepEqual(s.seen, [`code ${SENDER}`]);
  });

  test("an implementation of another kind than the proxy's is unknown", async () => {
    // Solady's proxy serves Kernel and Light Account, not SimpleAccount.
    const s = scripted({
      code: proxy(SOLADY_ERC1967_PROXY_CODE_HASH),
      words: { [ERC1967_IMPLEMENTATION_SLOT]: word(implementationOfFactory(SIMPLE_ACCOUNT_ADDRESSES.factoryV07)) },
    });
    assert.equal((await resolve({}, s)).known, false);
    const kernel = scripted({
      code: proxy(SOLADY_ERC1967_PROXY_CODE_HASH),
      words: { [ERC1967_IMPLEMENTATION_SLOT]: word(KERNEL.v3Implementations[3]) },
    });
    assert.deepEqual(await resolve({}, kernel), { known: true, kind: 'kernelV3' });
  });

  test('a Safe needs the known singleton in slot 0 and a known 4337 module as fallback handler', async () => {
    const words = { [pad('0x00')]: word(SAFE_4337_ADDRESSES.singleton) };
    const good = scripted({
      code: proxy(SAFE_PROXY_CODE_HASH),
      words: { ...words, [SAFE_FALLBACK_HANDLER_SLOT]: word(SAFE_4337_ADDRESSES.safe4337Module) },
    });
    assert.deepEqual(await resolve({}, good), { known: true, kind: 'safe4337' });
    const handler = scripted({
      code: proxy(SAFE_PROXY_CODE_HASH),
      words: { ...words, [SAFE_FALLBACK_HANDLER_SLOT]: word(EVIL) },
    });
    const r = await resolve({}, handler);
    assert.ok(!r.known);
    assert.match(r.found.reason, /fallback handler/);
  });

  test("Biconomy SA v2's proxy keeps its implementation at the slot numbered by its own address", async () => {
    const s = scripted({
      code: proxy(BICONOMY_PROXY_CODE_HASH),
      words: { [pad(SENDER)]: word('0x0000002512019Dafb59528B82CB92D3c5D2423aC') },
    });
    assert.deepEqual(await resolve({}, s), { known: true, kind: 'biconomyV2' });
  });

  test('an EIP-7702 account is known by its delegate; an authorization names the delegate it installs', async () => {
    const delegated = (d: Address) => scripted({ code: { codeHash: delegationCodeHash(d), delegate: d } });
    assert.deepEqual(await resolve({}, delegated(SIMPLE_ACCOUNT_ADDRESSES.simple7702V09)), {
      known: true,
      kind: 'simpleAccountV08',
    });
    const evil = await resolve({}, delegated(EVIL));
    assert.ok(!evil.known);
    assert.equal(evil.found.delegate, EVIL);
    const s = scripted();
    const auth = await resolve({ eip7702Auth: { address: SIMPLE_ACCOUNT_ADDRESSES.simple7702V08 } }, s);
    assert.deepEqual(auth, { known: true, kind: 'simpleAccountV08' });
    assert.deepEqual(s.seen, [], 'the authorization says it: no read');
    const marker = await resolve(
      { initCode: '0x7702' },
      scripted({ code: proxy(SIMPLE_ACCOUNT_PROXY_CODE_HASHES['0.7']) }),
    );
    assert.equal(marker.known, false, 'the 0x7702 marker on a sender that is not delegated');
  });
});

describe('resolveSenderAccount: a sender not deployed yet', () => {
  const simpleInit = (factory: Address) =>
    concat([
      factory,
      encodeFunctionData({
        abi: parseAbi(['function createAccount(address owner, uint256 salt)']),
        functionName: 'createAccount',
        args: [SENDER, 0n],
      }),
    ]);

  test('a known factory is known; an unknown one is unknown, naming it; no code and no initCode is unknown', async () => {
    assert.deepEqual(await resolve({ initCode: simpleInit(SIMPLE_ACCOUNT_ADDRESSES.factoryV08) }, scripted()), {
      known: true,
      kind: 'simpleAccountV08',
    });
    const r = await resolve({ initCode: simpleInit(EVIL) }, scripted());
    assert.ok(!r.known);
    assert.equal(r.found.factory?.toLowerCase(), EVIL);
    assert.equal((await resolve({ initCode: '0x' }, scripted())).known, false);
    assert.equal((await resolve({ initCode: '0x1234' }, scripted())).known, false, 'shorter than an address');
  });

  test('v0.9 also wants the sender to be what the initCode deploys (it ignores initCode once code is there)', async () => {
    const initCode = simpleInit(SIMPLE_ACCOUNT_ADDRESSES.factoryV08);
    const s = scripted({ deploys: SENDER });
    assert.deepEqual(await resolve({ initCode }, s, '0.9'), { known: true, kind: 'simpleAccountV08' });
    assert.deepEqual(s.seen, [`code ${SENDER}`, 'getSenderAddress']);
    const elsewhere = await resolve({ initCode }, scripted({ deploys: EVIL }), '0.9');
    assert.ok(!elsewhere.known);
    assert.match(elsewhere.found.reason, /not the address its initCode deploys/);
    const v08 = scripted({ deploys: EVIL });
    assert.equal((await resolve({ initCode }, v08, '0.8')).known, true, 'v0.8 checks that itself (AA14)');
    assert.deepEqual(v08.seen, [`code ${SENDER}`]);
  });

  test("Safe's proxy factory deploys any singleton: the singleton and the fallback handler in its data must be known", async () => {
    const setup = (handler: Address) =>
      encodeFunctionData({
        abi: parseAbi([
          'function setup(address[] owners, uint256 threshold, address to, bytes data, address fallbackHandler, address paymentToken, uint256 payment, address paymentReceiver)',
        ]),
        functionName: 'setup',
        args: [[SENDER], 1n, zeroAddress, '0x', handler, zeroAddress, 0n, zeroAddress],
      });
    const init = (singleton: Address, handler: Address) =>
      concat([
        SAFE_4337_ADDRESSES.proxyFactory,
        encodeFunctionData({
          abi: parseAbi(['function createProxyWithNonce(address singleton, bytes initializer, uint256 saltNonce)']),
          functionName: 'createProxyWithNonce',
          args: [singleton, setup(handler), 0n],
        }),
      ]);
    const module = SAFE_4337_ADDRESSES.safe4337Module;
    assert.deepEqual(await resolve({ initCode: init(SAFE_4337_ADDRESSES.singleton, module) }, scripted()), {
      known: true,
      kind: 'safe4337',
    });
    assert.equal((await resolve({ initCode: init(EVIL, module) }, scripted())).known, false, 'a singleton of its own');
    assert.equal((await resolve({ initCode: init(SAFE_4337_ADDRESSES.singleton, EVIL) }, scripted())).known, false);
    const garbage = await resolve({ initCode: concat([SAFE_4337_ADDRESSES.proxyFactory, '0xdeadbeef']) }, scripted());
    assert.ok(!garbage.known);
    assert.match(garbage.found.reason, /cannot read/);
  });

  test("Kernel's factories: the v2 factory's implementation argument, the meta factory's inner factory", async () => {
    const v2 = (implementation: Address) =>
      concat([
        KERNEL.v2Factory,
        encodeFunctionData({
          abi: parseAbi(['function createAccount(address implementation, bytes data, uint256 index)']),
          functionName: 'createAccount',
          args: [implementation, '0x', 0n],
        }),
      ]);
    assert.equal((await resolve({ initCode: v2(KERNEL.v2Implementations[3]) }, scripted())).known, true);
    assert.equal((await resolve({ initCode: v2(EVIL) }, scripted())).known, false);
    const meta = (factory: Address) =>
      concat([
        KERNEL.v3MetaFactory,
        encodeFunctionData({
          abi: parseAbi(['function deployWithFactory(address factory, bytes createData, bytes32 salt)']),
          functionName: 'deployWithFactory',
          args: [factory, '0x', pad('0x00')],
        }),
      ]);
    assert.deepEqual(await resolve({ initCode: meta(KERNEL.v3Factories[3]) }, scripted()), {
      known: true,
      kind: 'kernelV3',
    });
    assert.equal((await resolve({ initCode: meta(EVIL) }, scripted())).known, false);
    assert.equal((await resolve({ initCode: meta(KERNEL.v3MetaFactory) }, scripted())).known, false);
  });
});

describe('knownAccounts: the tables', () => {
  test("a chain's own accounts add to the canonical ones; one address cannot serve two kinds", () => {
    const mine = knownAccountsSchema.parse({
      lightAccount: {
        implementations: ['0xae8c656ad28F2B59a196AB61815C16A0AE1c3cba'],
        factories: ['0x00004EC70002a32400f8ae005A26081065620D20'],
        proxyCodeHashes: [keccak256('0x01')],
      },
    });
    const t = knownAccounts([CANONICAL_ACCOUNTS, mine]);
    assert.equal(t.implementations.get('0xae8c656ad28f2b59a196ab61815c16a0ae1c3cba'), 'lightAccount');
    assert.equal(t.proxies.get(keccak256('0x01'))?.slot, 'erc1967');
    assert.equal(t.factories.get(SIMPLE_ACCOUNT_ADDRESSES.factoryV07.toLowerCase()), 'simpleAccountV07');
    const clash = knownAccountsSchema.parse({
      kernelV2: { implementations: [SIMPLE_ACCOUNT_ADDRESSES.simple7702V08] },
    });
    assert.throws(() => knownAccounts([CANONICAL_ACCOUNTS, clash]), /simpleAccountV08's, not kernelV2's/);
    const safeStyle = knownAccountsSchema.parse({ safe4337: { proxyCodeHashes: [SOLADY_ERC1967_PROXY_CODE_HASH] } });
    assert.throws(() => knownAccounts([CANONICAL_ACCOUNTS, safeStyle]), /another slot/);
  });

  test('the configuration refuses what the tables could not hold', () => {
    const accepted = (v: unknown) => knownAccountsSchema.safeParse(v).success;
    assert.equal(accepted({ nexus: {} }), false, 'unknown kind');
    assert.equal(accepted({ kernelV3: { implementations: ['0x12'] } }), false);
    assert.equal(accepted({ kernelV3: { proxyCodeHashes: ['0x12'] } }), false);
    assert.equal(accepted({ kernelV3: { modules: [SENDER] } }), false, 'modules are for safe4337');
    assert.equal(accepted({ kernelV3: { implementation: [SENDER] } }), false, 'a misspelt field');
    assert.equal(accepted({ kernelV3: { implementations: [SENDER] }, kernelV2: { factories: [SENDER] } }), false);
    assert.equal(accepted({ kernelV3: { implementations: [SENDER] }, safe4337: { modules: [EVIL] } }), true);
    assert.equal(accepted({ lightAccount: { bootstraps: [SENDER] } }), false, 'bootstraps are for Nexus');
    assert.equal(accepted({ nexusV13: { factories: [SENDER], bootstraps: [EVIL] } }), true);
  });
});

describe('resolveSenderAccount: an undeployed Nexus', () => {
  const FACTORY: Address = '0x0000b1C08f1418dA76B5E99c1Bf5718486cf8c53';
  const BOOTSTRAP: Address = '0x0000B1c0A80cb7DD166a15e7390b8A4Ced4500C6';
  const abi = parseAbi(['function createAccount(bytes initData, bytes32 salt)']);
  const initCode = (factory: Address, bootstrap: Address) =>
    concat([
      factory,
      encodeFunctionData({
        abi,
        functionName: 'createAccount',
        args: [encodeAbiParameters(parseAbiParameters('address, bytes'), [bootstrap, '0x12345678']), pad('0x01')],
      }),
    ]);
  const resolveWith = (known: ReturnType<typeof knownAccounts>, code: Hex) =>
    resolveSenderAccount({ chain: chainOf(), reads: scripted().reads, known, op: { sender: SENDER, initCode: code } });

  test("a chain's own Nexus factory is known with a bootstrap listed for the chain or shipped, not another", async () => {
    const mine = knownAccountsSchema.parse({ nexusV13: { factories: [FACTORY], bootstraps: [BOOTSTRAP] } });
    const withMine = knownAccounts([CANONICAL_ACCOUNTS, mine]);
    assert.deepEqual(await resolveWith(withMine, initCode(FACTORY, BOOTSTRAP)), { known: true, kind: 'nexusV13' });
    const shipped = CANONICAL_ACCOUNTS.nexusV12?.bootstraps?.[0];
    assert.ok(shipped);
    assert.deepEqual(await resolveWith(withMine, initCode(FACTORY, shipped)), { known: true, kind: 'nexusV13' });
    const factoryOnly = knownAccounts([
      CANONICAL_ACCOUNTS,
      knownAccountsSchema.parse({ nexusV13: { factories: [FACTORY] } }),
    ]);
    const r = await resolveWith(factoryOnly, initCode(FACTORY, BOOTSTRAP));
    assert.ok(!r.known);
    assert.deepEqual(
      [r.found.reason, r.found.implementation, r.found.factory],
      ['a Nexus bootstrap Patron does not know', BOOTSTRAP, FACTORY],
    );
  });
});
