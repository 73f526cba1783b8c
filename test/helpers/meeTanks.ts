import { randomBytes } from 'node:crypto';
import type { Address } from 'viem';
import { newTankId } from '../../src/mee/createGasTank.js';
import type { Store } from '../../src/store/store.js';
import type { MeeTank, NewMeeTank } from '../../src/store/tenants/meeTankRepository.js';

/** A gas tank row for a dApp, straight into the store (the route tests need one to address; no chain involved). */
export async function insertTestTank(
  store: Pick<Store, 'meeTanks'>,
  dappId: string,
  over: Partial<NewMeeTank> = {},
): Promise<MeeTank> {
  return store.meeTanks.create({
    id: newTankId(),
    dappId,
    chainId: 31337,
    address: `0x${randomBytes(20).toString('hex')}` as Address,
    token: `0x${'0a'.repeat(20)}`,
    tokenDecimals: 6,
    meeVersion: '2.2.1',
    signer: { kind: 'kms', keyId: 'alias/test-tank' },
    owner: `0x${'0b'.repeat(20)}`,
    lowBalance: undefined,
    createdAt: Date.now(),
    ...over,
  });
}
