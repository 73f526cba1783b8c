import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { OwnedDapp } from '../accounts/accountService.js';
import { createDappInput, updateDappInput } from '../accounts/schemas.js';
import { parseInput } from '../errors/parseInput.js';
import { type AdminAuth, authenticateAccount } from './adminAuth.js';
import { sendOk } from './envelope.js';
import { bodyObject } from './jsonBodyParser.js';

export const dappView = z.object({
  dappId: z.string(),
  name: z.string(),
  chainIds: z.array(z.number().int()),
  apiKey: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const toDappView = (d: OwnedDapp): z.infer<typeof dappView> => ({
  dappId: d.id,
  name: d.name,
  chainIds: [...d.chainIds],
  apiKey: d.apiKey,
  createdAt: new Date(d.createdAt).toISOString(),
  updatedAt: new Date(d.updatedAt).toISOString(),
});

type DappParams = { Params: { dappId: string } };

export function registerAdminDappRoutes(app: FastifyInstance, deps: AdminAuth): void {
  const { accounts } = deps;

  app.get('/api/admin/dapps', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    return sendOk(reply, 'dApps fetched', (await accounts.listDapps(account.id)).map(toDappView));
  });

  app.post('/api/admin/dapps', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const body = parseInput(createDappInput, bodyObject(req.body));
    const dapp = await accounts.createDapp({ accountId: account.id, name: body.name, chainIds: body.chainIds });
    return sendOk(reply, 'dApp created', toDappView(dapp));
  });

  app.get<DappParams>('/api/admin/dapps/:dappId', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const dapp = await accounts.getDapp({ accountId: account.id, dappId: req.params.dappId });
    return sendOk(reply, 'dApp fetched', toDappView(dapp));
  });

  app.patch<DappParams>('/api/admin/dapps/:dappId', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const body = parseInput(updateDappInput, bodyObject(req.body));
    const dapp = await accounts.updateDapp({ accountId: account.id, dappId: req.params.dappId, ...body });
    return sendOk(reply, 'dApp updated', toDappView(dapp));
  });

  app.post<DappParams>('/api/admin/dapps/:dappId/rotate-key', async (req, reply) => {
    const account = await authenticateAccount(req, deps);
    const dapp = await accounts.rotateApiKey({ accountId: account.id, dappId: req.params.dappId });
    return sendOk(reply, 'API key rotated', toDappView(dapp));
  });
}
