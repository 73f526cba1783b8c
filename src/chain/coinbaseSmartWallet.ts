import type { Address } from 'viem';

/**
 * Coinbase Smart Wallet v1 and v1.1 (EntryPoint v0.6): factories from viem 2.x `toCoinbaseSmartAccount`
 * (`factoryAddress`) and coinbase/smart-wallet's README; implementations from its script/DeployFactory.s.sol
 * (`EXPECTED_IMPLEMENTATION`, tags v1.0.0 and v1.1.0), the address each factory is constructed with. The factory
 * (`CoinbaseSmartWalletFactory.createAccount`) deploys `LibClone.createDeterministicERC1967` of Solady at the
 * commit both tags pin (c4c9660), whose runtime is chain/canonicalAccounts.ts's SOLADY_ERC1967_PROXY_CODE_HASH.
 */
export const COINBASE_SMART_WALLET = {
  implementations: [
    '0x000100abaad02f1cfC8Bbe32bD5a564817339E72', // v1
    '0x00000110dCdEdC9581cb5eCB8467282f2926534d', // v1.1
  ],
  factories: [
    '0x0BA5ED0c6AA8c49038F819E587E2633c4A9F428a', // v1
    '0xBA5ED110eFDBa3D005bfC882d75358ACBbB85842', // v1.1
  ],
} as const satisfies Record<string, readonly Address[]>;
