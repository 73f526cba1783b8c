import { toNexusAccount } from '@biconomy/abstractjs';
import { type Address, type Chain, custom, defineChain, getAddress, type PublicClient } from 'viem';
import { toAccount } from 'viem/accounts';
import { ValidationError } from '../errors/PatronError.js';
import { hasCode } from './tankChainReads.js';
import { tankMeeConfig } from './tankMeeConfig.js';

/** An account that has an address and signs nothing: enough for abstractjs to compute where the Nexus account is. */
function addressOnly(owner: Address) {
  const refuse = async (): Promise<never> => {
    throw new Error('the tank address is computed without its key');
  };
  return toAccount({ address: owner, signMessage: refuse, signTransaction: refuse, signTypedData: refuse });
}

function chainOf(client: PublicClient, chainId: number): Chain {
  return (
    client.chain ??
    defineChain({
      id: chainId,
      name: `chain ${chainId}`,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [] } },
    })
  );
}

/**
 * Where the gas tank of `owner` is for `meeVersion` on the client's chain: the Nexus account abstractjs itself
 * derives for that owner as its K1 (MEE) validator's owner, index 0, at that version's factory, computed by the
 * factory's `computeAccountAddress` through the SDK's `toNexusAccount` (so the init data is the SDK's, not ours).
 * Undefined when the factory has no code there (a dev chain that is not a fork): the address cannot be computed.
 */
export async function computeTankAddress(args: {
  readonly client: PublicClient;
  readonly chainId: number;
  readonly owner: Address;
  readonly meeVersion: string;
}): Promise<Address | undefined> {
  const version = tankMeeConfig(args.meeVersion);
  if (!(await hasCode({ client: args.client, address: version.factoryAddress }))) return undefined;
  const account = await toNexusAccount({
    signer: addressOnly(args.owner),
    chainConfiguration: {
      chain: chainOf(args.client, args.chainId),
      transport: custom({ request: args.client.request }),
      version,
    },
  });
  return getAddress(await account.getAddress());
}

/**
 * The tank's address as recorded, from what the chain computed (undefined: no factory there) and what the operator
 * gave: the computed one (a given address must equal it), or the given one, which is then the operator's word
 * (docs/guides/mee-gas-tanks.md).
 */
export function chooseTankAddress(args: {
  readonly computed: Address | undefined;
  readonly given: Address | undefined;
  readonly chainId: number;
  readonly owner: Address;
  readonly meeVersion: string;
}): { readonly address: Address; readonly computed: boolean } {
  const { computed, given } = args;
  if (computed === undefined) {
    if (given === undefined) {
      throw new ValidationError(
        `the MEE ${args.meeVersion} Nexus factory has no code on chain ${args.chainId}, so the tank's address cannot be computed: give it (--address), or run on a chain (or a fork) that has the factory`,
      );
    }
    return { address: getAddress(given), computed: false };
  }
  if (given !== undefined && getAddress(given) !== getAddress(computed)) {
    throw new ValidationError(
      `the given address ${given} is not the tank of owner ${args.owner} at MEE ${args.meeVersion} on chain ${args.chainId} (that is ${computed})`,
    );
  }
  return { address: getAddress(computed), computed: true };
}

/** The tank's address for the owner and version on the client's chain, checked against a given one (above). */
export async function resolveTankAddress(args: {
  readonly client: PublicClient;
  readonly chainId: number;
  readonly owner: Address;
  readonly meeVersion: string;
  readonly given: Address | undefined;
}): Promise<{ readonly address: Address; readonly computed: boolean }> {
  return chooseTankAddress({ ...args, computed: await computeTankAddress(args) });
}
