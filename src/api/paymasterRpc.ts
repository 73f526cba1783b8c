import type { FastifyBodyParser, FastifyInstance } from 'fastify';
import type { AccountService } from '../accounts/accountService.js';
import type { ChainRegistry } from '../chain/chainRegistry.js';
import { ChainNotServedError, UnauthorizedError } from '../errors/PatronError.js';
import type { BoundsResolver } from '../paymaster/boundsResolver.js';
import type { SponsorshipService } from '../paymaster/sponsorshipService.js';
import type { TokenPaymasterService } from '../paymaster/tokenPaymasterService.js';
import type { RequestLimits } from '../rateLimit/requestLimits.js';
import type { OnCall } from '../rpc/callReport.js';
import { handleJsonRpc } from '../rpc/handleJsonRpc.js';
import { PAYMASTER_METHODS } from '../rpc/registry.js';
import type { RpcContext } from '../rpc/rpcMethod.js';
import { setJsonRpcErrorHandler } from './jsonRpcErrorHandler.js';

/** Larger than the REST limit: a user operation may carry a whole contract deployment in its initCode. */
export const RPC_BODY_LIMIT = 512 * 1024;

const PAYMASTER_URL_PREFIX = '/api/v1/';
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Whether a request is paymaster traffic (`/api/v1/…`: the JSON-RPC route, and junk under its prefix). Its
 * access log is at debug, not info; see the logger options in app.ts for why.
 */
export function isPaymasterRpcUrl(url: string): boolean {
  return url.startsWith(PAYMASTER_URL_PREFIX);
}

export interface PaymasterRpcDeps {
  readonly accounts: AccountService;
  readonly chains: ChainRegistry;
  readonly sponsorship: SponsorshipService;
  readonly tokenPaymaster: TokenPaymasterService;
  /** The signing bounds of a dApp on a chain. */
  readonly bounds: BoundsResolver;
  /** Told of every finished call with a resolved dApp (the request log, the metrics): rpc/callReport.ts. */
  readonly onCall?: OnCall | undefined;
  /** The rate limits: per client IP before the key is looked up, then the dApp's budgets. */
  readonly limits: RequestLimits;
}

/**
 * `POST /api/v1/{chainId}/{apiKey}`: the paymaster URL every EntryPoint v0.6 Biconomy SDK builds. The API key
 * travels only in the path. Registered in its own Fastify scope, so its body parser (raw text, parsed by the
 * JSON-RPC layer to answer -32700 itself) and its error shape (JSON-RPC, not the REST envelope) stay here.
 */
export function registerPaymasterRpcRoutes(app: FastifyInstance, deps: PaymasterRpcDeps): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    const asText: FastifyBodyParser<string> = (_req, body, done) => done(null, body);
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: RPC_BODY_LIMIT }, asText);
    // The same parser under the type clients send: Fastify caches the lookup of a named type, but re-parses
    // the Content-Type header on every request that falls through to '*'.
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: RPC_BODY_LIMIT }, asText);
    setJsonRpcErrorHandler(scope, RPC_BODY_LIMIT);

    scope.post<{ Params: { chainId: string; apiKey: string } }>('/api/v1/:chainId/:apiKey', async (req, reply) => {
      const { chainId, apiKey } = req.params;
      const ip = req.ip;
      const out = await handleJsonRpc({
        body: typeof req.body === 'string' ? req.body : '',
        methods: PAYMASTER_METHODS,
        context: () => resolveContext({ deps, chainIdText: chainId, apiKey, ip }),
        log: req.log,
        admit: () => deps.limits.paymasterCall(ip),
        ...(deps.onCall === undefined ? {} : { onCall: deps.onCall }),
      });
      if (out.retryAfterSeconds !== undefined) reply.header('retry-after', String(out.retryAfterSeconds));
      if (out.body === undefined) reply.code(204).send();
      else reply.code(out.status).header('content-type', JSON_CONTENT_TYPE).send(JSON.stringify(out.body));
      // The access log of this route (Fastify's own request lines are off for it, see app.ts).
      req.log.debug({ req, res: reply, responseTime: reply.elapsedTime }, 'paymaster request answered');
      return reply;
    });
  });
}

async function resolveContext(args: {
  deps: PaymasterRpcDeps;
  chainIdText: string;
  apiKey: string;
  ip: string;
}): Promise<RpcContext> {
  const dapp = await args.deps.accounts.resolveApiKey(args.apiKey);
  if (dapp === undefined) throw new UnauthorizedError('Invalid API key: check the paymaster URL');
  const chainId = /^\d{1,15}$/.test(args.chainIdText) ? Number(args.chainIdText) : undefined;
  if (chainId === undefined) throw new ChainNotServedError(`"${args.chainIdText.slice(0, 20)}" is not a chain id`);
  if (!dapp.chainIds.includes(chainId)) throw new ChainNotServedError(`This dApp does not serve chain ${chainId}`);
  const chain = args.deps.chains.get(chainId);
  if (chain === undefined) throw new ChainNotServedError(`Chain ${chainId} is not configured on this Patron`);
  // `report: undefined` reserves the observers' slot (see RpcContext.report).
  return {
    dapp,
    chain,
    bounds: args.deps.bounds(dapp.limits, chainId),
    sponsorship: args.deps.sponsorship,
    tokens: args.deps.tokenPaymaster,
    spend: args.deps.limits.dappSpend({ dappId: dapp.id, override: dapp.limits.rateLimits, ip: args.ip }),
    report: undefined,
  };
}
