import { type Address, getAddress } from 'viem';
import { z } from 'zod';

/**
 * The EIP-7702 delegates Patron sponsors (PATRON_EIP7702_DELEGATES, comma-separated addresses): a 7702 account
 * runs whatever code its EOA delegated to, so sponsoring any delegate would let one that approves anything spend
 * the paymaster's signature. Default: the implementations today's SDKs delegate to, each checked against the
 * address its npm package publishes:
 * - eth-infinitism Simple7702Account for EntryPoint v0.8 (viem `toSimple7702SmartAccount`, permissionless
 *   `to7702SimpleSmartAccount`) and v0.9;
 * - MetaMask's EIP7702StatelessDeleGator (@metamask/delegation-deployments);
 * - Biconomy Nexus 1.2.0 and 1.3 (@biconomy/abstractjs 1.2.3's `toNexusAccount` 7702 mode delegates an EOA to the
 *   implementation of its MEE version; chain/nexusAccounts.ts cites each, and a test holds the two lists equal).
 *   Nexus validates with its installed validators, or with the EOA's own key before any is installed.
 */
export const DEFAULT_EIP7702_DELEGATES: readonly Address[] = [
  '0xe6Cae83BdE06E4c305530e199D7217f42808555B',
  '0xa46cc63eBF4Bd77888AA327837d20b23A63a56B5',
  '0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B',
  '0x000000004F43C49e93C970E84001853a70923B03',
  '0x00000000383e8cBe298514674Ea60Ee1d1de50ac',
  '0x0000000020fe2F30453074aD916eDeB653eC7E9D',
  '0x54F220e4f0DEAb58Be26153df5a674668B9d7Fb2',
  '0x37DF3014c8B72372F2783aAF517bcdC6B516c8Df',
];

export const eip7702DelegatesFromEnv = addressListFromEnv('PATRON_EIP7702_DELEGATES');

/** A setting of comma-separated addresses, checksummed; unset or blank: undefined (the caller's default). */
export function addressListFromEnv(name: string) {
  return z
    .string()
    .optional()
    .transform((v, ctx): readonly Address[] | undefined => {
      if (v === undefined || v.trim() === '') return undefined;
      const items = v.split(',').map((x) => x.trim());
      const bad = items.find((x) => !/^0x[0-9a-fA-F]{40}$/.test(x));
      if (bad !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be comma-separated addresses; "${bad.slice(0, 50)}" is not one`,
        });
        return z.NEVER;
      }
      return items.map((x) => getAddress(x.toLowerCase()));
    });
}
