import { randomBytes } from 'node:crypto';
import { type Address, getAddress, type PublicClient } from 'viem';
import type { TankSignerRef } from '../config/tankSignerRef.js';
import { ChainNotServedError, ValidationError } from '../errors/PatronError.js';
import type { MeeTank, MeeTankRepository } from '../store/tenants/meeTankRepository.js';
import { resolveTankAddress } from './tankAddress.js';
import { readTankTokenDecimals } from './tankChainReads.js';
import { DEFAULT_TANK_MEE_VERSION, tankMeeConfig } from './tankMeeConfig.js';

/** A new tank's id: `tank_` and 12 random bytes. */
export const newTankId = (): string => `tank_${randomBytes(12).toString('hex')}`;

/**
 * Registers a gas tank (docs/guides/mee-gas-tanks.md): on a chain Patron serves, for a token with code there (its
 * decimals read on chain), owned by the key the reference names (`ownerOf` opens it: mee/tankOwner.ts), at the
 * address computed for that owner and MEE version, or the one given when the factory is not on the chain. The
 * caller has checked that the dApp exists and is the caller's.
 */
export async function createGasTank(args: {
  readonly tanks: Pick<MeeTankRepository, 'create'>;
  readonly client: PublicClient;
  readonly chainId: number;
  readonly servedChainIds: readonly number[];
  readonly dappId: string;
  readonly token: Address;
  readonly signer: TankSignerRef;
  readonly ownerOf: (ref: TankSignerRef) => Promise<Address>;
  readonly meeVersion?: string | undefined;
  readonly address?: Address | undefined;
  /** The alert threshold, from the token's decimals (read here): checked before anything is stored. */
  readonly lowBalance?: ((decimals: number) => bigint) | undefined;
  readonly now: number;
}): Promise<MeeTank & { readonly addressComputed: boolean }> {
  const { client, chainId } = args;
  if (!args.servedChainIds.includes(chainId)) {
    throw new ChainNotServedError(`chain ${chainId} is not served by this Patron (${args.servedChainIds.join(', ')})`);
  }
  const actual = await client.getChainId();
  if (actual !== chainId) throw new ValidationError(`the RPC answers chain ${actual}, not chain ${chainId}`);
  const meeVersion = args.meeVersion ?? DEFAULT_TANK_MEE_VERSION;
  tankMeeConfig(meeVersion);
  const tokenDecimals = await readTankTokenDecimals({ client, token: args.token, chainId });
  const lowBalance = args.lowBalance?.(tokenDecimals);
  if (lowBalance !== undefined && lowBalance < 0n) throw new ValidationError('the low-balance threshold must be >= 0');
  const owner = await args.ownerOf(args.signer);
  const { address, computed } = await resolveTankAddress({
    client,
    chainId,
    owner,
    meeVersion,
    given: args.address,
  });
  const tank = await args.tanks.create({
    id: newTankId(),
    dappId: args.dappId,
    chainId,
    address,
    token: getAddress(args.token),
    tokenDecimals,
    meeVersion,
    signer: args.signer,
    owner,
    lowBalance,
    createdAt: args.now,
  });
  return { ...tank, addressComputed: computed };
}
