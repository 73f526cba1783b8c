import { getMEEVersion, MEEVersion, toNexusAccount } from '@biconomy/abstractjs';
import { type Address, custom, encodeAbiParameters, type Hex, type LocalAccount } from 'viem';
import { base } from 'viem/chains';

/**
 * SDK account objects built without a chain that has the accounts, for their own encoders (encodeCalls, initCode):
 * a transport that answers `accountId()` with `accountId` and `eth_getCode` with no code, and fails every other
 * request, so a test notices if an SDK reads anything else. The account's address is given, so no SDK asks a
 * factory for it. (No public chain and no Nexus bytecode is reachable here: chain/nexusAccounts.ts.)
 */
export function offlineTransport(accountId?: string) {
  return custom({
    async request({ method, params }: { method: string; params?: unknown }) {
      if (method === 'eth_chainId') return '0x2105';
      // viem's Coinbase account asks whether it is deployed before it gives its factory data.
      if (method === 'eth_getCode') return '0x';
      const [call] = (params ?? []) as [{ data?: Hex }];
      if (method === 'eth_call' && accountId !== undefined && call.data === '0x9cfd7cff') {
        return encodeAbiParameters([{ type: 'string' }], [accountId]);
      }
      throw new Error(`unexpected request ${method} ${JSON.stringify(params)}`);
    },
  });
}

/** abstractjs 1.2.3's Nexus account of an MEE version (2.0.0: Nexus 1.2.0; 2.2.1: the 1.3 line). */
export function offlineNexusAccount(args: { version: MEEVersion; owner: LocalAccount; address: Address }) {
  const id = args.version === MEEVersion.V2_0_0 || args.version === MEEVersion.V2_1_0 ? '1.2.0' : '1.3.1';
  return toNexusAccount({
    signer: args.owner,
    chainConfiguration: {
      chain: base,
      transport: offlineTransport(`biconomy.nexus.${id}`),
      version: getMEEVersion(args.version),
      versionCheck: false,
      accountAddress: args.address,
    },
  });
}
