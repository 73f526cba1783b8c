import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Address, getAddress, isAddress } from 'viem';
import type { AccountService } from '../accounts/accountService.js';
import { brokenCallerRule, corsOriginAllowed } from '../dappSettings/callerRestrictions.js';
import type { DappTokenSettings } from '../dappSettings/sponsorshipTokenSettings.js';
import {
  CallerNotAllowedError,
  NotFoundError,
  PatronError,
  SponsorshipTokenError,
  ValidationError,
} from '../errors/PatronError.js';
import type { MeeSponsorService } from '../mee/meeSponsorService.js';
import type { CallReport, OnCall } from '../rpc/callReport.js';
import { toRpcError } from '../rpc/rpcErrors.js';
import type { SponsorshipGrant } from '../sponsorshipTokens/sponsorshipGrant.js';
import type { SponsorshipTokenGate } from '../sponsorshipTokens/sponsorshipTokenGate.js';
import type { StorageHealth } from '../store/db/storageHealth.js';
import type { DappRecord } from '../store/records.js';
import { toHttpError } from './envelope.js';
import { RPC_BODY_LIMIT } from './paymasterRpc.js';

/** The prefix of a dApp's MEE sponsor URL: abstractjs's `sponsorshipOptions.url` is `{origin}/mee/{dappId}/v1`. */
export const MEE_SPONSOR_PREFIX = '/mee/';

export interface MeeSponsorRouteDeps {
  readonly accounts: Pick<AccountService, 'findDappById'>;
  readonly tokenGate: SponsorshipTokenGate;
  readonly meeSponsor: MeeSponsorService;
  readonly storageHealth: Pick<StorageHealth, 'report'>;
  /** Told of every finished sign call (the request log, the metrics, `sponsorship.signed`): rpc/callReport.ts. */
  readonly onCall?: OnCall | undefined;
}

/** The method name a sign call is reported under (the request log, the metrics' `method` label). */
export const MEE_SIGN_METHOD = 'mee_sponsorshipSign';

type Params = { dappId: string; chainId?: string; tank?: string };

/**
 * The MEE sponsor endpoints abstractjs calls for `sponsorshipOptions` (docs/guides/mee-sponsorship.md):
 * `GET {url}/sponsorship/nonce/{chainId}/{tank}`, `POST {url}/sponsorship/sign/{chainId}/{tank}` and
 * `GET {url}/sponsorship/info`. The SDK sends them from the browser with the dApp's `customHeaders`, so every call
 * carries the dApp's sponsorship token (`Authorization: Bearer`), meets its caller restrictions, and is answered
 * with CORS for its allowed origins. Errors are `{ errors: [{ code, msg }] }` with the status the REST API gives the
 * same error: what abstractjs turns into its thrown message.
 */
export function registerMeeSponsorRoutes(app: FastifyInstance, deps: MeeSponsorRouteDeps): void {
  void app.register(async (scope) => {
    scope.setErrorHandler((err, req, reply) => {
      deps.storageHealth.report(err);
      const h = toHttpError(err, RPC_BODY_LIMIT);
      if (h.internal) req.log.error({ err }, 'MEE sponsor request failed');
      const reason = err instanceof PatronError ? (err.data?.reason ?? err.data?.rule ?? err.code) : 'INTERNAL';
      if (h.retryAfterSeconds !== undefined) reply.header('retry-after', String(h.retryAfterSeconds));
      return reply.code(h.statusCode).send({ errors: [{ code: String(reason), msg: h.message }] });
    });

    const base = `${MEE_SPONSOR_PREFIX}:dappId/v1/sponsorship`;
    scope.options<{ Params: Params }>(`${base}/*`, async (req, reply) => {
      const origin = req.headers.origin;
      const dapp = await deps.accounts.findDappById(req.params.dappId).catch(() => undefined);
      if (origin !== undefined && dapp !== undefined && corsOriginAllowed(dapp.restrictions, origin)) {
        reply.headers({
          'access-control-allow-origin': origin,
          'access-control-allow-methods': 'GET, POST',
          // abstractjs sends Content-Type on every call, and the dApp's customHeaders (its token's Authorization, and
          // any other name the dApp chose): the names the browser asks for are allowed, the origin being the dApp's.
          'access-control-allow-headers': allowedHeaders(req.headers['access-control-request-headers']),
          'access-control-max-age': '600',
        });
      }
      return reply.code(204).header('vary', 'Origin').send();
    });

    scope.get<{ Params: Params }>(`${base}/nonce/:chainId/:tank`, async (req, reply) => {
      const { dapp, chainId, tank } = await admit(deps, req, reply, { sender: undefined });
      return deps.meeSponsor.nonce({ dappId: dapp.id, chainId, tank });
    });

    scope.post<{ Params: Params }>(`${base}/sign/:chainId/:tank`, { bodyLimit: RPC_BODY_LIMIT }, async (req, reply) => {
      const { dapp, chainId, tank, grant } = await admit(deps, req, reply, { sender: firstUserSender(req.body) });
      const at = Date.now();
      const report = (facts: CallReport['facts'], error?: CallReport['error']) =>
        deps.onCall?.({
          at,
          method: MEE_SIGN_METHOD,
          accountId: dapp.accountId,
          dappId: dapp.id,
          chainId,
          facts,
          latencyMs: Date.now() - at,
          ...(error === undefined ? {} : { error }),
        });
      try {
        const signed = await deps.meeSponsor.sign({
          caller: { dappId: dapp.id, grant },
          chainId,
          tank,
          body: req.body,
        });
        report(signed.facts);
        return signed.quote;
      } catch (err) {
        report([], toRpcError(err).error);
        throw err;
      }
    });

    scope.get<{ Params: Params }>(`${base}/info`, async (req, reply) => {
      const { dapp } = await admitDapp(deps, req, reply);
      return deps.meeSponsor.info({ dappId: dapp.id });
    });
  });
}

/** Header names only (a browser sends a comma list); anything else falls back to what abstractjs needs. */
function allowedHeaders(requested: string | undefined): string {
  const base = 'content-type, authorization';
  if (requested === undefined || !/^[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+)*$/.test(requested) || requested.length > 512) {
    return base;
  }
  return requested;
}

/** The dApp by its id in the URL, its caller restrictions met, CORS answered for its allowed origins. */
async function admitDapp(deps: MeeSponsorRouteDeps, req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
  const dapp: DappRecord | undefined = await deps.accounts.findDappById(req.params.dappId);
  if (dapp === undefined) throw new NotFoundError('No such dApp: check the sponsor URL');
  const origin = req.headers.origin;
  if (origin !== undefined) {
    reply.header('vary', 'Origin');
    if (corsOriginAllowed(dapp.restrictions, origin)) reply.header('access-control-allow-origin', origin);
  }
  const broken = brokenCallerRule({ restrictions: dapp.restrictions, origin, ip: req.ip, family: 'sponsorship' });
  if (broken !== undefined) throw new CallerNotAllowedError({ rule: broken, family: 'sponsorship' });
  return { dapp };
}

/** The dApp, the tank's chain and address from the URL, and the call's sponsorship token (required here). */
async function admit(
  deps: MeeSponsorRouteDeps,
  req: FastifyRequest<{ Params: Params }>,
  reply: FastifyReply,
  carrier: { readonly sender: Address | undefined },
): Promise<{ dapp: DappRecord; chainId: number; tank: Address; grant: SponsorshipGrant }> {
  const { dapp } = await admitDapp(deps, req, reply);
  const chainText = req.params.chainId ?? '';
  const chainId = /^\d{1,15}$/.test(chainText) ? Number(chainText) : undefined;
  if (chainId === undefined || chainId === 0)
    throw new ValidationError(`"${chainText.slice(0, 20)}" is not a chain id`);
  const tankText = req.params.tank ?? '';
  if (!isAddress(tankText, { strict: false }))
    throw new ValidationError(`"${tankText.slice(0, 42)}" is not an address`);
  const settings = dapp.sponsorshipTokens;
  if (settings === undefined) {
    // A tank pays whoever reaches this URL with a quote: without the dApp's own backend vouching, nobody may.
    throw new SponsorshipTokenError({
      reason: 'token_required',
      message: 'MEE sponsorship needs the dApp to register a sponsorship-token key and send tokens in customHeaders',
    });
  }
  const grant = await deps.tokenGate.admit({
    settings: requiredSettings(settings),
    dappId: dapp.id,
    chainId,
    authorization: req.headers.authorization,
    carrier: { contextToken: undefined, webhookData: {}, sender: carrier.sender },
  });
  if (grant === undefined) throw new Error('the token gate admitted a required token without one');
  return { dapp, chainId, tank: getAddress(tankText), grant };
}

/**
 * The dApp's token settings with `required` set, one object per settings object: the token gate caches a verified
 * token for the settings object it verified under, so a new object per call would verify every token again.
 */
const required = new WeakMap<DappTokenSettings, DappTokenSettings>();
function requiredSettings(settings: DappTokenSettings): DappTokenSettings {
  if (settings.required) return settings;
  let r = required.get(settings);
  if (r === undefined) {
    r = { ...settings, required: true };
    required.set(settings, r);
  }
  return r;
}

/** The first user op's sender (leaf 1), for a token bound to a `sender`; the service checks every op's. */
function firstUserSender(body: unknown): Address | undefined {
  const ops = (body as { userOps?: unknown } | null)?.userOps;
  if (!Array.isArray(ops)) return undefined;
  const sender = (ops[1] as { userOp?: { sender?: unknown } } | undefined)?.userOp?.sender;
  return typeof sender === 'string' && isAddress(sender, { strict: false }) ? getAddress(sender) : undefined;
}
