import type { Address } from 'viem';
import { deploySimpleAccounts } from './accountFactories.js';
import { deployPatronPaymasterV07, patronPaymasterV07Abi } from './deployPatronPaymasterV07.js';
import { type DevClient, waitForSuccess } from './devClient.js';
import { deployEntryPoint, type EntryPointV07Version, type EntryPointVersion } from './entryPoints.js';
import { deploySafe4337, type Safe4337Addresses } from './safe4337.js';

/**
 * What the dev chain has for each EntryPoint version beyond v0.6, at the addresses today's SDKs default to.
 * EntryPointSimulations is not deployed: simulation puts it at the EntryPoint's address through an eth_call
 * state override (see paymaster/entryPoints/v07/simulateV07.ts), as bundlers do.
 */
export interface AccountAbstractionStack {
  readonly entryPoints: Readonly<Record<EntryPointVersion, Address>>;
  /** SimpleAccountFactory per version (v0.6's is the dev chain's own deployment, the others canonical). */
  readonly simpleAccountFactories: Readonly<Record<'0.6' | '0.7' | '0.8', Address>>;
  /** The EIP-7702 delegate per version. */
  readonly simple7702Accounts: Readonly<Record<'0.8' | '0.9', Address>>;
  /** Safe 1.4.1 with its 4337 module for EntryPoint v0.7. */
  readonly safe4337: Safe4337Addresses;
}

/** Deploys EntryPoints v0.6 to v0.9 and the v0.7+ accounts; idempotent. `simpleAccountFactoryV06` is reported. */
export async function installAccountAbstractionStack(
  client: DevClient,
  simpleAccountFactoryV06: Address,
): Promise<AccountAbstractionStack> {
  // One after the other: they are transactions from one account, and concurrent sends would race for its nonce.
  const entryPoints = {
    '0.6': await deployEntryPoint(client, '0.6'),
    '0.7': await deployEntryPoint(client, '0.7'),
    '0.8': await deployEntryPoint(client, '0.8'),
    '0.9': await deployEntryPoint(client, '0.9'),
  };
  const simple = await deploySimpleAccounts(client);
  const safe4337 = await deploySafe4337(client);
  return {
    entryPoints,
    simpleAccountFactories: { '0.6': simpleAccountFactoryV06, '0.7': simple.factoryV07, '0.8': simple.factoryV08 },
    simple7702Accounts: { '0.8': simple.simple7702V08, '0.9': simple.simple7702V09 },
    safe4337,
  };
}

/**
 * One PatronPaymasterV07 per EntryPoint v0.7, v0.8 and v0.9 (the contract serves one EntryPoint, and derives
 * its version from the address), owned by `owner`, signing with `verifyingSigner`, each given `depositWei`
 * of EntryPoint deposit as the v0.6 paymaster is.
 */
export async function deployPatronPaymastersV07(params: {
  readonly client: DevClient;
  readonly entryPoints: Readonly<Record<EntryPointVersion, Address>>;
  readonly owner: Address;
  readonly verifyingSigner: Address;
  readonly depositWei: bigint;
  /** Staked in the EntryPoint as well (ERC-7562: the token mode needs a staked paymaster), when given. */
  readonly stake?: { readonly wei: bigint; readonly unstakeDelaySec: number } | undefined;
}): Promise<Record<EntryPointV07Version, Address>> {
  const { client, owner, verifyingSigner } = params;
  const deploy = async (version: EntryPointV07Version): Promise<Address> => {
    const paymaster = await deployPatronPaymasterV07({
      client,
      entryPoint: params.entryPoints[version],
      owner,
      verifyingSigner,
    });
    if (params.depositWei > 0n) {
      const hash = await client.writeContract({
        address: paymaster,
        abi: patronPaymasterV07Abi,
        functionName: 'deposit',
        value: params.depositWei,
      });
      await waitForSuccess(client, hash, `paymaster v${version} deposit`);
    }
    if (params.stake !== undefined) {
      const hash = await client.writeContract({
        address: paymaster,
        abi: patronPaymasterV07Abi,
        functionName: 'addStake',
        args: [params.stake.unstakeDelaySec],
        value: params.stake.wei,
      });
      await waitForSuccess(client, hash, `paymaster v${version} stake`);
    }
    return paymaster;
  };
  // One after the other, as above: one sending account.
  return { '0.7': await deploy('0.7'), '0.8': await deploy('0.8'), '0.9': await deploy('0.9') };
}
