import type { FastifyBodyParser, FastifyInstance } from 'fastify';
import type { AccountService } from '../accounts/accountService.js';
import { type ChainRegistry, type EntryPointVersion, forEntryPointVersion } from '../chain/chainRegistry.js';
import { corsOriginAllowed } from '../dappSettings/callerRestrictions.js';
import { ChainNotServedError, UnauthorizedError } from '../errors/PatronError.js';
import type { BoundsResolver } from '../paymaster/boundsResolver.js';
import type { SponsorshipService } from '../paymaster/sponsored/sponsorshipService.js';
import type { TokenPaymasterService } from '../paymaster/token/tokenPaymasterService.js';
import type { RequestLimits } from '../rateLimit/requestLimits.js';
import type { OnCall } from '../rpc/callReport.js';
import { handleJsonRpc } from '../rpc/handleJsonRpc.js';
import { PAYMASTER_METHODS } from '../rpc/registry.js';
import type { CallerFacts, RpcContext } from '../rpc/rpcMethod.js';
import type { SponsorshipTokenGate } from '../sponsorshipTokens/sponsorshipTokenGate.js';
import type { StorageHealth } from '../store/db/storageHealth.js';
import type { DappRecord } from '../store/records.js';
import { setJsonRpcErrorHandler } from './jsonRpcErrorHandler.js';
import { REST_UNDER_JSON_RPC } from './jsonRpcPaths.js';

/** Larger than the REST limit: a user operation may carry a whole contract deployment in its initCode. */
export const RPC_BODY_LIMIT = 512 * 1024;

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The paymaster URLs and the EntryPoint each one means when a call names none (docs/reference/json-rpc.md, "EntryPoint v0.7, v0.8 and v0.9"):
 * `/api/v1/…` is what every EntryPoint v0.6 Biconomy SDK builds, `/api/v2/…` what the v0.7 ones build
 * (@biconomy/abstractjs). Calls that name their EntryPoint (ERC-7677, Pimlico's dialect) are served on either
 * URL for every EntryPoint the chain has.
 */
export const PAYMASTER_URLS: readonly { readonly prefix: string; readonly entryPointVersion: EntryPointVersion }[] = [
  { prefix: '/api/v1/', entryPointVersion: '0.6' },
  { prefix: '/api/v2/', entryPointVersion: '0.7' },
];

/**
 * Whether a request is paymaster traffic (the JSON-RPC routes, and junk under their prefixes). Its access log is
 * at debug, not info; see the logger options in app.ts for why.
 */
export function isPaymasterRpcUrl(url: string): boolean {
  return PAYMASTER_URLS.some((u) => url.startsWith(u.prefix)) && !url.startsWith(REST_UNDER_JSON_RPC);
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
  /** Hears of every call's error: a storage fault among them is named once and fails /readyz. */
  readonly storageHealth: Pick<StorageHealth, 'report'>;
  /**
   * The rate limits: a batch's further calls per client IP (the request's own unit is spent by the app's onRequest
   * hook, paymasterAdmission.ts), then the dApp's budgets.
   */
  readonly limits: RequestLimits;
  /** The dApps' sponsorship tokens (sponsorshipTokens/sponsorshipTokenGate.ts). */
  readonly tokenGate: SponsorshipTokenGate;
}

/**
 * `POST /api/v1/{chainId}/{apiKey}` and `POST /api/v2/{chainId}/{apiKey}`: the paymaster URLs the Biconomy SDKs
 * build (PAYMASTER_URLS). The API key travels only in the path. Registered in its own Fastify scope, so its body
 * parser (raw text, parsed by the JSON-RPC layer to answer -32700 itself) and its error shape (JSON-RPC, not the
 * REST envelope) stay here.
 */
export function registerPaymasterRpcRoutes(app: FastifyInstance, deps: PaymasterRpcDeps): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    const asText: FastifyBodyParser<string> = (_req, body, done) => done(null, body);
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: RPC_BODY_LIMIT }, asText);
    // The same parser under the type clients send: Fastify caches the lookup of a named type, but re-parses
    // the Content-Type header on every request that falls through to '*'.
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: RPC_BODY_LIMIT }, asText);
    setJsonRpcErrorHandler(scope, RPC_BODY_LIMIT, deps.storageHealth);
    const reportStorageFault = (err: unknown) => {
      deps.storageHealth.report(err);
    };

    for (const { prefix, entryPointVersion } of PAYMASTER_URLS) {
      // The CORS preflight a browser sends before a cross-origin POST with an Authorization header (a sponsorship
      // token): answered for an origin the dApp's caller restrictions allow, any when they name none. Counted like a
      // call before the key is looked up (paymasterAdmission.ts); a browser sends one per URL per max-age.
      scope.options<{ Params: { chainId: string; apiKey: string } }>(
        `${prefix}:chainId/:apiKey`,
        async (req, reply) => {
          const origin = req.headers.origin;
          if (
            origin !== undefined &&
            (await corsAllows(() => deps.accounts.resolveApiKey(req.params.apiKey), origin))
          ) {
            reply.headers({
              ...corsHeaders(origin),
              'access-control-allow-methods': 'POST',
              'access-control-allow-headers': 'content-type, authorization',
              'access-control-max-age': '600',
            });
          }
          return reply.code(204).header('vary', 'Origin').send();
        },
      );
      scope.post<{ Params: { chainId: string; apiKey: string } }>(`${prefix}:chainId/:apiKey`, async (req, reply) => {
        const { chainId, apiKey } = req.params;
        const ip = req.ip;
        const origin = req.headers.origin;
        const authorization = req.headers.authorization;
        const caller = { origin, ip, authorization };
        // The key is looked up at most once per request, for the calls and the CORS answer below alike: an unknown
        // key is not cached (accountService.resolveApiKey), so a second lookup would be a second query.
        let lookup: Promise<DappRecord | undefined> | undefined;
        const dappOf = () => {
          lookup ??= deps.accounts.resolveApiKey(apiKey);
          return lookup;
        };
        // The request itself was counted before its body was read (paymasterAdmission.ts, the app's onRequest
        // hook); `admit` counts a batch's further calls.
        const out = await handleJsonRpc({
          body: typeof req.body === 'string' ? req.body : '',
          methods: PAYMASTER_METHODS,
          context: () => resolveContext({ deps, chainIdText: chainId, dappOf, caller, entryPointVersion }),
          log: req.log,
          admit: () => deps.limits.paymasterCall(ip),
          onError: reportStorageFault,
          ...(deps.onCall === undefined ? {} : { onCall: deps.onCall }),
        });
        // A browser reads the answer of a cross-origin call only with these; no Origin (servers, SDKs in Node): none.
        if (origin !== undefined) {
          reply.header('vary', 'Origin');
          // A body refused before its context (a parse error, an invalid request) looks the key up here.
          if (await corsAllows(dappOf, origin)) {
            reply.headers(corsHeaders(origin));
            if (out.retryAfterSeconds !== undefined) reply.header('access-control-expose-headers', 'Retry-After');
          }
        }
        if (out.retryAfterSeconds !== undefined) reply.header('retry-after', String(out.retryAfterSeconds));
        if (out.body === undefined) reply.code(204).send();
        else reply.code(out.status).header('content-type', JSON_CONTENT_TYPE).send(JSON.stringify(out.body));
        // The access log of this route (Fastify's own request lines are off for it, see app.ts).
        req.log.debug({ req, res: reply, responseTime: reply.elapsedTime }, 'paymaster request answered');
        return reply;
      });
    }
  });
}

const corsHeaders = (origin: string) => ({ 'access-control-allow-origin': origin });

/** The key's dApp lets a browser at `origin` call it (its cached record: no query on a warm key). */
async function corsAllows(dappOf: () => Promise<DappRecord | undefined>, origin: string): Promise<boolean> {
  const dapp = await dappOf().catch(() => undefined);
  return dapp !== undefined && corsOriginAllowed(dapp.restrictions, origin);
}

async function resolveContext(args: {
  deps: PaymasterRpcDeps;
  chainIdText: string;
  /** The key's dApp, looked up once per request. */
  dappOf: () => Promise<DappRecord | undefined>;
  caller: CallerFacts;
  entryPointVersion: EntryPointVersion;
}): Promise<RpcContext> {
  const dapp = await args.dappOf();
  if (dapp === undefined) throw new UnauthorizedError('Invalid API key: check the paymaster URL');
  const chainId = /^\d{1,15}$/.test(args.chainIdText) ? Number(args.chainIdText) : undefined;
  if (chainId === undefined) throw new ChainNotServedError(`"${args.chainIdText.slice(0, 20)}" is not a chain id`);
  if (!dapp.chainIds.includes(chainId)) throw new ChainNotServedError(`This dApp does not serve chain ${chainId}`);
  const chain = args.deps.chains.get(chainId);
  if (chain === undefined) throw new ChainNotServedError(`Chain ${chainId} is not configured on this Patron`);
  return {
    dapp,
    chain: forEntryPointVersion(chain, args.entryPointVersion) ?? chain,
    urlEntryPointVersion: args.entryPointVersion,
    bounds: args.deps.bounds(dapp.limits, chainId),
    sponsorship: args.deps.sponsorship,
    tokenPaymaster: args.deps.tokenPaymaster,
    sponsorshipTokens: args.deps.tokenGate,
    caller: args.caller,
    spend: args.deps.limits.dappSpend({ dappId: dapp.id, override: dapp.limits.rateLimits, ip: args.caller.ip }),
  };
}
