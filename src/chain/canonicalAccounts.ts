import { type Address, getContractAddress, type Hex } from 'viem';
import type { KnownAccountsSetting } from '../config/knownAccountsSettings.js';
import { SIMPLE_ACCOUNT_ADDRESSES } from './accountFactories.js';
import { BICONOMY_SMART_ACCOUNT_V2 } from './biconomySmartAccountV2.js';
import { COINBASE_SMART_WALLET } from './coinbaseSmartWallet.js';
import { NEXUS } from './nexusAccounts.js';
import { SAFE_4337_ADDRESSES } from './safe4337.js';

/**
 * The smart accounts Patron knows on every chain, for the contract allowlist of sponsorship policies (docs/guides/policies.md, "How
 * policies are enforced"): public deployments at the same address on every chain, each a fact taken from an SDK
 * installed here or the account's public repository (cited per entry), never guessed. A chain adds its own in
 * `PATRON_CHAINS[i].accounts`; the dev chain registers what it deploys (devChainKnownAccounts).
 *
 * Proxy code hashes are keccak256 of an account proxy's runtime code. Those of SimpleAccount, Safe and Biconomy are
 * the accounts the dev chain deploys through the canonical factories, which it installs byte for byte (their
 * addresses are CREATE2 of the npm initcode), so they are the public ones too; test/knownAccounts.devChain.test.ts
 * recomputes each.
 */

/**
 * eth-infinitism's SimpleAccountFactory deploys its implementation in its constructor (`new SimpleAccount(...)`),
 * the factory's first CREATE: the implementation is CREATE(factory, nonce 1). (Light Account's factory does the same.)
 */
export const implementationOfFactory = (factory: Address): Address => getContractAddress({ from: factory, nonce: 1n });

/** permissionless 0.4.1 `toSimpleSmartAccount`'s default factory for EntryPoint v0.6 (its getFactoryAddress). */
const SIMPLE_ACCOUNT_FACTORY_V06: Address = SIMPLE_ACCOUNT_ADDRESSES.factoryV06;

/**
 * Solady's LibClone ERC-1967 proxy (ERC-7760's basic UUPS variant), the runtime code
 * `0x363d3d373d3d363d7f360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc545af43d6000803e6038573d6000fd5b3d6000f3`:
 * what Kernel 0.3's factories, Light Account v2's factory (`LibClone.createDeterministicERC1967`,
 * alchemyplatform/light-account) and Coinbase Smart Wallet's factory (chain/coinbaseSmartWallet.ts) deploy; @biconomy/abstractjs's PROXY_CREATION_CODE is its creation code.
 */
export const SOLADY_ERC1967_PROXY_CODE_HASH: Hex = '0xaaa52c8cc8a0e3fd27ce756cc6b4e70c51423e9b597b11f32d3e49f8b1fc890d';

/**
 * Kernel 0.2's factory (`AdminLessERC1967Factory`, zerodevapp/kernel) deploys its own 127-byte ERC-1967 proxy, which
 * delegates to the ERC-1967 slot and lets only the factory set it: `3d3d3373 ‖ factory ‖ 14605757363d3d37363d7f
 * 360894a1…3d6000fd` as that contract's `_initCode` lays it out, with the factory 0x5de4…5ae3. Assembled from the
 * source, not read from a deployment (the dev chain has no Kernel): a wrong hash matches no account, and Kernel 0.2
 * accounts are then refused until an operator lists the right one.
 */
export const KERNEL_V2_PROXY_CODE_HASH: Hex = '0x7254edb0ba49650a2ecb4fbf9223710f6223925b0aa26ad310e486ccf5c4473a';

/** The ERC1967Proxy each SimpleAccountFactory release deploys (OpenZeppelin as compiled in that npm release). */
export const SIMPLE_ACCOUNT_PROXY_CODE_HASHES = {
  '0.6': '0x0acbd632c56f6f227951f6c832b36177319145deddb8df3a12c3bcc91fbf49b3',
  '0.7': '0x0cf33e42b59cd30ce43a3d95a9c4de2589047c5e0968708337764f9776097210',
  '0.8': '0x41ee894da413cc99e8dec0a1784470eceb736845ad1591e06ff0ecdf0aca26c9',
} as const satisfies Record<string, Hex>;

/** SafeProxy 1.4.1 (SafeProxyFactory 1.4.1's proxyCreationCode, @safe-global/safe-contracts 1.4.1). */
export const SAFE_PROXY_CODE_HASH: Hex = '0xd7d408ebcd99b2b70be43e20253d6d92a8ea8fab29bd3be7f55b10032331fb4c';

/** Biconomy Smart Account v2's Proxy (runtime part of permissionless's `BICONOMY_PROXY_CREATION_CODE`). */
export const BICONOMY_PROXY_CODE_HASH: Hex = '0xeb943ca16c0a3d8c19be2c02105552f49d4ff1d02fb80b199b613f085c8c7847';

/**
 * Kernel's addresses: permissionless 0.4.1 `KERNEL_VERSION_TO_ADDRESSES_MAP` (ACCOUNT_LOGIC, FACTORY_ADDRESS). Not
 * checked against a deployment (no network here, and no Kernel bytecode on the dev chain): a wrong address matches
 * no account, which is then refused until an operator lists the right one.
 */
export const KERNEL = {
  v2Implementations: [
    '0xf048AD83CB2dfd6037A43902a2A5Be04e53cd2Eb', // 0.2.1
    '0x0DA6a956B9488eD4dd761E59f52FDc6c8068E6B5', // 0.2.2
    '0xD3F582F6B4814E989Ee8E96bc3175320B5A540ab', // 0.2.3
    '0xd3082872F8B06073A021b4602e022d5A070d7cfC', // 0.2.4
  ],
  /** 0.2.x's KernelFactory: `createAccount(implementation, data, index)`, the implementation an argument. */
  v2Factory: '0x5de4839a76cf55d0c90e2061ef4386d962E15ae3',
  v3Implementations: [
    '0x94F097E1ebEB4ecA3AAE54cabb08905B239A7D27', // 0.3.0-beta
    '0xBAC849bB641841b44E965fB01A4Bf5F074f84b4D', // 0.3.1
    '0xD830D15D3dc0C269F3dBAa0F3e8626d33CFdaBe1', // 0.3.2
    '0xd6CEDDe84be40893d153Be9d467CD6aD37875b28', // 0.3.3
  ],
  /** One factory per 0.3.x release, each deploying its own implementation. */
  v3Factories: [
    '0x6723b44Abeec4E71eBE3232BD5B455805baDD22f',
    '0xaac5D4240AF87249B3f71BC8E4A2cae074A3E419',
    '0x7a1dBAB750f12a90EB1B60D2Ae3aD17D4D81EfFe',
    '0x2577507b78c2008Ff367261CB6285d44ba5eF2E9',
  ],
  /** The meta factory (FactoryStaker): `deployWithFactory(factory, createData, salt)`, permissionless's default. */
  v3MetaFactory: '0xd703aaE79538628d27099B8c4f621bE4CCd142d5',
} as const satisfies Record<string, Address | readonly Address[]>;

/**
 * Light Account v2.0.0: factory from permissionless 0.4.1 `toLightSmartAccount`, implementation from
 * alchemyplatform/light-account `deployments/` (= CREATE(factory, 1), its constructor's `new LightAccount`).
 * v1.1.0 deploys OpenZeppelin's ERC1967Proxy as Alchemy compiled it, whose code hash no source here gives: an
 * operator adds it (`proxyCodeHashes`) with its factory and implementation. Like Kernel's, not checked against a
 * deployment.
 */
export const LIGHT_ACCOUNT_V2 = {
  factory: '0x0000000000400CdFef5E2714E63d8040b700BC24',
  implementation: '0x8E8e658E22B12ada97B402fF0b044D6A325013C7',
} as const satisfies Record<string, Address>;

/** Safe's 4337 module 0.2.0, the EntryPoint v0.6 one (permissionless 0.4.1's Safe 1.4.1 addresses for v0.6). */
export const SAFE_4337_MODULE_V06: Address = '0xa581c4A4DB7175302464fF3C06380BC3270b4037';

/** Every chain's known accounts (policies/knownAccounts.ts merges a chain's own over them). */
export const CANONICAL_ACCOUNTS: KnownAccountsSetting = {
  simpleAccountV06: {
    implementations: [implementationOfFactory(SIMPLE_ACCOUNT_FACTORY_V06)],
    factories: [SIMPLE_ACCOUNT_FACTORY_V06],
    proxyCodeHashes: [SIMPLE_ACCOUNT_PROXY_CODE_HASHES['0.6']],
  },
  simpleAccountV07: {
    implementations: [implementationOfFactory(SIMPLE_ACCOUNT_ADDRESSES.factoryV07)],
    factories: [SIMPLE_ACCOUNT_ADDRESSES.factoryV07],
    proxyCodeHashes: [SIMPLE_ACCOUNT_PROXY_CODE_HASHES['0.7']],
  },
  simpleAccountV08: {
    // Simple7702Account v0.8 and v0.9 are EIP-7702 delegates with SimpleAccount v0.8's methods (BaseAccount).
    implementations: [
      implementationOfFactory(SIMPLE_ACCOUNT_ADDRESSES.factoryV08),
      SIMPLE_ACCOUNT_ADDRESSES.simple7702V08,
      SIMPLE_ACCOUNT_ADDRESSES.simple7702V09,
    ],
    factories: [SIMPLE_ACCOUNT_ADDRESSES.factoryV08],
    proxyCodeHashes: [SIMPLE_ACCOUNT_PROXY_CODE_HASHES['0.8']],
  },
  safe4337: {
    implementations: [SAFE_4337_ADDRESSES.singleton],
    factories: [SAFE_4337_ADDRESSES.proxyFactory],
    proxyCodeHashes: [SAFE_PROXY_CODE_HASH],
    modules: [SAFE_4337_ADDRESSES.safe4337Module, SAFE_4337_MODULE_V06],
  },
  kernelV2: {
    implementations: [...KERNEL.v2Implementations],
    factories: [KERNEL.v2Factory],
    proxyCodeHashes: [KERNEL_V2_PROXY_CODE_HASH],
  },
  kernelV3: {
    implementations: [...KERNEL.v3Implementations],
    factories: [...KERNEL.v3Factories, KERNEL.v3MetaFactory],
    proxyCodeHashes: [SOLADY_ERC1967_PROXY_CODE_HASH],
  },
  lightAccount: {
    implementations: [LIGHT_ACCOUNT_V2.implementation],
    factories: [LIGHT_ACCOUNT_V2.factory],
    proxyCodeHashes: [SOLADY_ERC1967_PROXY_CODE_HASH],
  },
  biconomyV2: {
    implementations: [BICONOMY_SMART_ACCOUNT_V2.implementation],
    factories: [BICONOMY_SMART_ACCOUNT_V2.factory],
    proxyCodeHashes: [BICONOMY_PROXY_CODE_HASH],
  },
  // No proxy code hash: see chain/nexusAccounts.ts.
  nexusV12: {
    implementations: [...NEXUS.v12.implementations],
    factories: [...NEXUS.v12.factories],
    bootstraps: [...NEXUS.v12.bootstraps],
  },
  nexusV13: {
    implementations: [...NEXUS.v13.implementations],
    factories: [...NEXUS.v13.factories],
    bootstraps: [...NEXUS.v13.bootstraps],
  },
  coinbaseSmartWallet: {
    implementations: [...COINBASE_SMART_WALLET.implementations],
    factories: [...COINBASE_SMART_WALLET.factories],
    proxyCodeHashes: [SOLADY_ERC1967_PROXY_CODE_HASH],
  },
};

/**
 * Factories that take the account's implementation as an argument, so that the factory alone does not say what
 * the account runs: their factoryData is read (policies/knownAccounts.ts) and its implementation must be known.
 */
export const GENERIC_FACTORIES = {
  safeProxyFactory: SAFE_4337_ADDRESSES.proxyFactory,
  kernelV2Factory: KERNEL.v2Factory,
  kernelV3MetaFactory: KERNEL.v3MetaFactory,
} as const satisfies Record<string, Address>;

/** The dev chain's own SimpleAccountFactory v0.6 (not at the canonical address) and its implementation. */
export function devChainKnownAccounts(dev: { readonly simpleAccountFactory: Address }): KnownAccountsSetting {
  return {
    simpleAccountV06: {
      implementations: [implementationOfFactory(dev.simpleAccountFactory)],
      factories: [dev.simpleAccountFactory],
    },
  };
}
