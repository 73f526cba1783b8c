import { z } from 'zod';
import type { AccountService } from '../accounts/accountService.js';
import type { ChainRegistry } from '../chain/chainRegistry.js';
import { NotFoundError } from '../errors/PatronError.js';
import { readTankBalance } from '../mee/tankChainReads.js';
import type { MeeTank, MeeTankRepository } from '../store/tenants/meeTankRepository.js';
import { ADMIN_TAG } from './adminAccount.js';
import { DAPP_NOT_FOUND, dappParams } from './adminDapps.js';
import { type RouteDef, route } from './route.js';

/**
 * A dApp's Biconomy MEE gas tanks (docs/guides/mee-gas-tanks.md): list, one with its token balance, the low-balance
 * threshold, retire. Tanks are created by the operator with `patron tank create`, not here: a tank's signer
 * reference names files, a PKCS#11 library (loaded into Patron's process) and KMS keys reachable with Patron's own
 * credentials, which are the server operator's to choose, never a team's. The reference itself is not shown (only
 * its kind): it describes the server.
 *
 * Tenancy: every route is under a dApp of the caller's account (404 for another's, as for a missing one), and a tank
 * of another dApp is 404 under this one.
 */
export const tankView = z.object({
  id: z.string(),
  dappId: z.string(),
  chainId: z.number().int(),
  address: z.string(),
  token: z.string(),
  tokenDecimals: z.number().int(),
  meeVersion: z.string(),
  owner: z.string().describe("The owner key's address (the tank's MEE validator owner)"),
  signerKind: z
    .enum(['keystore', 'pkcs11', 'kms'])
    .describe('Where the owner key is; the reference itself stays on the server'),
  status: z.enum(['active', 'retired']),
  lowBalance: z.string().nullable().describe('Alert under this balance, in token base units; null: none'),
  sponsorPath: z.string().describe("The dApp's sponsor URL path, for abstractjs `sponsorshipOptions.url`"),
  createdAt: z.string(),
  retiredAt: z.string().nullable(),
});
export type TankView = z.infer<typeof tankView>;

const tankWithBalance = tankView.extend({
  balance: z
    .string()
    .nullable()
    .describe('The token balance in base units, read on chain now; null when the chain could not be read'),
});

export const toTankView = (t: MeeTank): TankView => ({
  id: t.id,
  dappId: t.dappId,
  chainId: t.chainId,
  address: t.address,
  token: t.token,
  tokenDecimals: t.tokenDecimals,
  meeVersion: t.meeVersion,
  owner: t.owner,
  signerKind: t.signer.kind,
  status: t.status,
  lowBalance: t.lowBalance?.toString() ?? null,
  sponsorPath: `/mee/${t.dappId}/v1`,
  createdAt: new Date(t.createdAt).toISOString(),
  retiredAt: t.retiredAt === undefined ? null : new Date(t.retiredAt).toISOString(),
});

const tankParams = dappParams.extend({ tankId: z.string().min(1) });
const TANK_NOT_FOUND = { '404': "dApp or gas tank not found (another account's dApp, another dApp's tank included)" };

const lowBalanceBody = z.strictObject({
  lowBalance: z
    .string({ error: 'lowBalance must be a decimal string of token base units, or null' })
    .regex(/^(0|[1-9][0-9]{0,77})$/, { error: 'lowBalance must be a decimal count of token base units' })
    .nullable()
    .describe('Token base units (a decimal string); null clears the alert'),
});

type TankDeps = {
  readonly accounts: Pick<AccountService, 'getDapp' | 'listDapps'>;
  readonly chains: Pick<ChainRegistry, 'get'>;
  readonly store: { readonly meeTanks: MeeTankRepository };
  readonly now: () => number;
};

export function adminMeeTankRoutes(deps: TankDeps): RouteDef[] {
  const { accounts, store } = deps;
  /** The tank, when it is this dApp's and the dApp is this account's; else 404 (the same either way). */
  const tankOf = async (accountId: string, dappId: string, tankId: string): Promise<MeeTank> => {
    await accounts.getDapp({ accountId, dappId });
    const tank = await store.meeTanks.get(tankId);
    if (tank === undefined || tank.dappId !== dappId) throw new NotFoundError('Gas tank not found');
    return tank;
  };
  const balanceOf = async (t: MeeTank): Promise<string | null> => {
    const chain = deps.chains.get(t.chainId);
    if (chain === undefined) return null;
    try {
      return (await readTankBalance({ client: chain.client, token: t.token, holder: t.address })).toString();
    } catch {
      return null;
    }
  };
  return [
    route({
      method: 'GET',
      path: '/api/admin/mee-tanks',
      auth: 'account',
      operationId: 'listMeeTanks',
      summary: "The gas tanks of every dApp of the caller's account, oldest first",
      tag: ADMIN_TAG,
      answer: { envelope: 'Gas tanks fetched', data: z.object({ tanks: z.array(tankView) }) },
      handler: async ({ account }) => {
        const dapps = await accounts.listDapps(account.id);
        const lists = await Promise.all(dapps.map((d) => store.meeTanks.listForDapp(d.id)));
        const tanks = lists.flat().sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
        return { tanks: tanks.map(toTankView) };
      },
    }),
    route({
      method: 'GET',
      path: '/api/admin/dapps/:dappId/mee-tanks',
      auth: 'account',
      operationId: 'listDappMeeTanks',
      summary: "The dApp's gas tanks, oldest first, retired ones too",
      tag: ADMIN_TAG,
      params: dappParams,
      answer: { envelope: 'Gas tanks fetched', data: z.object({ tanks: z.array(tankView) }) },
      errors: DAPP_NOT_FOUND,
      handler: async ({ account, params }) => {
        await accounts.getDapp({ accountId: account.id, dappId: params.dappId });
        return { tanks: (await store.meeTanks.listForDapp(params.dappId)).map(toTankView) };
      },
    }),
    route({
      method: 'GET',
      path: '/api/admin/dapps/:dappId/mee-tanks/:tankId',
      auth: 'account',
      operationId: 'getDappMeeTank',
      summary: 'One gas tank of the dApp, with its token balance read on chain',
      tag: ADMIN_TAG,
      params: tankParams,
      answer: { envelope: 'Gas tank fetched', data: tankWithBalance },
      errors: TANK_NOT_FOUND,
      handler: async ({ account, params }) => {
        const tank = await tankOf(account.id, params.dappId, params.tankId);
        return { ...toTankView(tank), balance: await balanceOf(tank) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/api/admin/dapps/:dappId/mee-tanks/:tankId',
      auth: 'account',
      operationId: 'setDappMeeTankLowBalance',
      summary: "Set (or clear, with null) the tank's low-balance alert threshold",
      tag: ADMIN_TAG,
      params: tankParams,
      body: lowBalanceBody,
      example: { lowBalance: '25000000' },
      answer: { envelope: 'Gas tank updated', data: tankView },
      errors: { '400': 'lowBalance missing, not a decimal count of base units, or an unknown key', ...TANK_NOT_FOUND },
      audit: {
        action: 'meeTank.lowBalance.set',
        before: async ({ account, params }) => toTankView(await tankOf(account.id, params.dappId, params.tankId)),
      },
      handler: async ({ account, params, body }) => {
        await tankOf(account.id, params.dappId, params.tankId);
        const lowBalance = body.lowBalance === null ? undefined : BigInt(body.lowBalance);
        const updated = await store.meeTanks.setLowBalance({ id: params.tankId, lowBalance });
        if (updated === undefined) throw new NotFoundError('Gas tank not found');
        return toTankView(updated);
      },
    }),
    route({
      method: 'POST',
      path: '/api/admin/dapps/:dappId/mee-tanks/:tankId/retire',
      auth: 'account',
      operationId: 'retireDappMeeTank',
      summary:
        'Retire the tank: Patron signs nothing more from it (its row, address and balance stay; withdraw with the owner key)',
      tag: ADMIN_TAG,
      params: tankParams,
      answer: { envelope: 'Gas tank retired', data: tankView },
      errors: TANK_NOT_FOUND,
      audit: {
        action: 'meeTank.retire',
        before: async ({ account, params }) => toTankView(await tankOf(account.id, params.dappId, params.tankId)),
      },
      handler: async ({ account, params }) => {
        await tankOf(account.id, params.dappId, params.tankId);
        const retired = await store.meeTanks.retire({ id: params.tankId, now: deps.now() });
        if (retired === undefined) throw new NotFoundError('Gas tank not found');
        return toTankView(retired);
      },
    }),
  ];
}
