import type { Address } from 'viem';

/**
 * Biconomy Nexus as @biconomy/abstractjs 1.2.3 deploys it (dist/_esm/constants/index.js,
 * `DEFAULT_CONFIGURATIONS_BY_MEE_VERSION`: `factoryAddress`, `bootStrapAddress`, `implementationAddress`), the
 * same addresses on every chain. The implementations are also EIP-7702 delegates: abstractjs's 7702 mode
 * (`toNexusAccount`'s `toDelegation`) delegates an EOA to `implementationAddress`.
 *
 * - 1.2.0: MEE 2.0.0 (the SDK's default) and 2.1.0, accountId `biconomy.nexus.1.2.0`, composability 1.0.0
 *   (bcnmy/nexus tag v1.2.0, package.json `@biconomy/composability#v1.0.0`);
 * - 1.3: MEE 2.2.1, 2.3.0 and 3.0.0, accountId `biconomy.nexus.1.3.1`, composability 1.1.0.
 * Nexus 1.0.2 (MEE 1.0.0, 1.1.0) runs `executeComposable` in a fallback module, not natively: not listed.
 *
 * Each factory (NexusAccountFactory) deploys its own implementation (an immutable) behind a NexusProxy, and its
 * account's first act is to delegatecall the bootstrap its initData names: the bootstrap must be one of these,
 * else it could set the proxy's implementation slot to any code (policies/knownAccounts.ts reads it).
 *
 * No proxy code hash is listed. The 1.2/1.3 factories deploy NexusProxy (OpenZeppelin's Proxy on the ERC-1967
 * slot plus an empty `receive()`, bcnmy/nexus contracts/utils/NexusProxy.sol since v1.2.0; 1.0.x deployed Solady's
 * ERC-1967 clone instead), whose runtime depends on the compiler settings of Biconomy's deployment, which nothing
 * here records, and no package installed here holds it. The one NexusProxy bytecode on npm, @rhinestone/modulekit
 * 0.5.9's NEXUS_PROXY_BYTECODE (src/deployment/precompiles/NexusPrecompiles.sol, beside a Nexus whose accountId is
 * `biconomy.nexus.1.0.0`), has no `receive()` branch, so it is not these proxies' code. So a deployed Nexus is
 * unknown until an operator lists its proxy's code hash (`cast codehash`) as `proxyCodeHashes`; an undeployed one
 * (by its factory) and a 7702 EOA (by its delegate) are known.
 */
export const NEXUS = {
  v12: {
    implementations: [
      '0x000000004F43C49e93C970E84001853a70923B03', // MEE 2.0.0
      '0x00000000383e8cBe298514674Ea60Ee1d1de50ac', // MEE 2.1.0
    ],
    factories: ['0x000000001D1D5004a02bAfAb9de2D6CE5b7B13de', '0x0000006648ED9B2B842552BE63Af870bC74af837'],
    bootstraps: ['0x00000000D3254452a909E4eeD47455Af7E27C289', '0x0000003eDf18913c01cBc482C978bBD3D6E8ffA3'],
  },
  v13: {
    implementations: [
      '0x0000000020fe2F30453074aD916eDeB653eC7E9D', // MEE 2.2.1
      '0x54F220e4f0DEAb58Be26153df5a674668B9d7Fb2', // MEE 2.3.0
      '0x37DF3014c8B72372F2783aAF517bcdC6B516c8Df', // MEE 3.0.0
    ],
    factories: [
      '0x000000002c9A405a196f2dc766F2476B731693c3',
      '0x5836Bdb35913c7CBA6ef40675354445121449917',
      '0x75Eb8D1621D193010425D34b4Ae81835E2409660',
    ],
    bootstraps: [
      '0x000000007BfEdA33ac982cb38eAaEf5D7bCC954c',
      '0xCa8f48912A3a33fE694c318a1d097AD394CFAB76',
      '0x33A8F72F236e02eD62B0312f48105AcBD651Cd17',
    ],
  },
} as const satisfies Record<string, Record<string, readonly Address[]>>;
