import type { MethodFamily } from '../dappSettings/callerRestrictions.js';
import { brokenCallerRule } from '../dappSettings/callerRestrictions.js';
import { CallerNotAllowedError, RateLimitedError } from '../errors/PatronError.js';
import type { PaymasterCall } from '../paymaster/paymasterCall.js';
import type { RequestFact } from '../paymaster/requestFacts.js';
import type { SponsorshipGrant } from '../sponsorshipTokens/sponsorshipGrant.js';
import type { TokenCarrier } from '../sponsorshipTokens/sponsorshipTokenGate.js';
import { storageUnavailable } from '../store/db/storageFault.js';
import type { OnCall } from './callReport.js';
import { RPC, type RpcErrorObject, toRpcError } from './rpcErrors.js';
import type { MethodOutcome, RegisteredMethod, RpcContext } from './rpcMethod.js';

/**
 * JSON-RPC 2.0 over one HTTP body (https://www.jsonrpc.org/specification): single requests and batches,
 * `id` echoed exactly as parsed, never `result` and `error` together, notifications (no `id`) answered with
 * nothing. `jsonrpc` may be "2.0" or the spec's "2.0.0"; answers always say "2.0".
 */
export type RpcId = string | number | null;
export type RpcResponse =
  | { jsonrpc: '2.0'; id: RpcId; result: unknown }
  | { jsonrpc: '2.0'; id: RpcId; error: RpcErrorObject };

export const MAX_BATCH = 20;

const PAID: Promise<void> = Promise.resolve();

export interface RpcLogger {
  error(obj: object, msg: string): void;
}

export interface HandleJsonRpcArgs {
  readonly body: string;
  readonly methods: ReadonlyMap<string, RegisteredMethod>;
  /** Resolves the dApp/chain context once per HTTP request; its error answers every request of the body. */
  readonly context: () => Promise<RpcContext>;
  readonly log: RpcLogger;
  /** Told of each finished call with a resolved dApp (the request log, the metrics); absent: nobody listens. */
  readonly onCall?: OnCall;
  /**
   * The per-IP rate limit of a batch's further calls: asked for each call of the body but the first, before
   * anything else is done for it, even before the API key is looked up. The transport counted the HTTP request as
   * one call before reading it (api/paymasterAdmission.ts), which pays for the first: a batch of N calls spends N.
   * Throws RateLimitedError to refuse the call.
   */
  readonly admit: () => Promise<void>;
  /** Told of every error a call ends with (the storage's health reads the storage faults among them). */
  readonly onError?: (err: unknown) => void;
}

/** What to send. `body` undefined means "nothing" (a batch of notifications). */
export interface RpcOutcome {
  readonly status: number;
  readonly body: unknown;
  /** Set when a call was refused by a rate limit or a storage fault: the Retry-After header (the batch's longest). */
  readonly retryAfterSeconds?: number;
}

export async function handleJsonRpc(args: HandleJsonRpcArgs): Promise<RpcOutcome> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args.body);
  } catch {
    return {
      status: 400,
      body: errorResponse(null, { code: RPC.PARSE_ERROR, message: 'Parse error: the body is not valid JSON' }),
    };
  }
  let contextPromise: Promise<RpcContext> | undefined;
  const context = () => {
    contextPromise ??= args.context();
    return contextPromise;
  };
  // The first call to get there is paid for by the request's own count (calls run concurrently, but each reaches
  // this synchronously, in the body's order); an element that is no call (invalid, a notification) spends nothing.
  let paid = true;
  const admit = () => {
    if (!paid) return args.admit();
    paid = false;
    return PAID;
  };
  const withContext: HandleJsonRpcArgs = { ...args, context, admit };
  if (!Array.isArray(parsed)) {
    const r = await handleOne(withContext, parsed);
    if (r === undefined) return { status: 204, body: undefined };
    return {
      status: 'error' in r.response ? r.status : 200,
      body: r.response,
      ...(r.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: r.retryAfterSeconds }),
    };
  }
  if (parsed.length === 0) {
    return {
      status: 400,
      body: errorResponse(null, { code: RPC.INVALID_REQUEST, message: 'Invalid request: empty batch' }),
    };
  }
  if (parsed.length > MAX_BATCH) {
    return {
      status: 400,
      body: errorResponse(null, {
        code: RPC.INVALID_REQUEST,
        message: `Invalid request: a batch may hold at most ${MAX_BATCH} requests`,
      }),
    };
  }
  const results = await Promise.all(parsed.map((item) => handleOne(withContext, item)));
  const responses = results.flatMap((r) => (r === undefined ? [] : [r.response]));
  if (responses.length === 0) return { status: 204, body: undefined };
  // A batch answers 200 with each call's own result or error; a rate-limited call is -32005 on its own.
  const waits = results.flatMap((r) => (r?.retryAfterSeconds === undefined ? [] : [r.retryAfterSeconds]));
  return { status: 200, body: responses, ...(waits.length === 0 ? {} : { retryAfterSeconds: Math.max(...waits) }) };
}

function errorResponse(id: RpcId, error: RpcErrorObject): RpcResponse {
  return { jsonrpc: '2.0', id, error };
}

function isRpcId(v: unknown): v is RpcId {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

async function handleOne(
  args: HandleJsonRpcArgs,
  item: unknown,
): Promise<{ response: RpcResponse; status: number; retryAfterSeconds?: number } | undefined> {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return {
      response: errorResponse(null, {
        code: RPC.INVALID_REQUEST,
        message: 'Invalid request: expected a JSON-RPC request object',
      }),
      status: 400,
    };
  }
  const req = item as Record<string, unknown>;
  const hasId = 'id' in req;
  const id: RpcId = hasId && isRpcId(req.id) ? req.id : null;
  const invalid = (message: string) => ({
    response: errorResponse(id, { code: RPC.INVALID_REQUEST, message: `Invalid request: ${message}` }),
    status: 400,
  });
  if (hasId && !isRpcId(req.id)) return invalid('id must be a string, a number or null');
  if (req.jsonrpc !== '2.0' && req.jsonrpc !== '2.0.0') return invalid('jsonrpc must be "2.0"');
  if (typeof req.method !== 'string') return invalid('method must be a string');
  if (req.params !== undefined && !Array.isArray(req.params)) return invalid('params must be an array');
  // A notification asks for no answer; a paymaster has nothing to do without one.
  if (!hasId) return undefined;
  const method = args.methods.get(req.method);
  if (method === undefined) {
    return {
      response: errorResponse(id, {
        code: RPC.METHOD_NOT_FOUND,
        message: `Method not found: ${req.method.slice(0, 100)}`,
      }),
      status: 400,
    };
  }
  // The observers: the domain reports facts into this call's list; the call is reported once when it ends.
  const onCall = args.onCall;
  const startedAt = onCall === undefined ? 0 : performance.now();
  const facts: RequestFact[] = [];
  let ctx: RpcContext | undefined;
  try {
    await args.admit();
    const served = await method.serve(req.params ?? [], {
      admit: async (family, carrier) => {
        ctx = await args.context();
        assertCallerAllowed(ctx, family);
        // The dApp's sponsorship token: after the caller checks, before the dApp's own budget and any work.
        const grant = carrier === undefined ? undefined : await admitSponsorshipToken(ctx, carrier);
        await ctx.spend.call();
        return { call: paymasterCall(ctx, onCall === undefined ? undefined : facts, grant), ctx };
      },
    });
    if (onCall !== undefined && ctx !== undefined) {
      report({ onCall, ctx, method: req.method, facts, startedAt, outcome: served.outcome });
    }
    return { response: { jsonrpc: '2.0', id, result: served.result }, status: 200 };
  } catch (err) {
    args.onError?.(err);
    const mapped = toRpcError(err);
    if (mapped.internal) args.log.error({ err, method: req.method }, 'JSON-RPC request failed');
    if (onCall !== undefined) {
      // Invalid params fail before the context is asked for; the call still belongs to its dApp's log.
      ctx ??= await args.context().catch(() => undefined);
      if (ctx !== undefined) report({ onCall, ctx, method: req.method, facts, startedAt, error: mapped.error });
    }
    const response = errorResponse(id, mapped.error);
    // A rate limit, or a storage fault (transient): the caller is told when to retry.
    const retryAfterSeconds =
      err instanceof RateLimitedError ? err.retryAfterSeconds : storageUnavailable(err)?.retryAfterSeconds;
    if (retryAfterSeconds !== undefined) return { response, status: mapped.http, retryAfterSeconds };
    return { response, status: mapped.http };
  }
}

/**
 * The key's caller restrictions, right after the key resolved and before any work: a refused call has spent the
 * per-IP budget (admit) but not the dApp's, so a caller the owner shut out cannot use up the dApp's own calls.
 */
function assertCallerAllowed(ctx: RpcContext, family: MethodFamily | undefined): void {
  const { restrictions } = ctx.dapp;
  if (restrictions.rules === undefined) return;
  const rule = brokenCallerRule({ restrictions, ...ctx.caller, family });
  if (rule !== undefined) throw new CallerNotAllowedError({ rule, family });
}

/**
 * The dApp's sponsorship token, for a method on the sponsorship path when the dApp has token settings (the caller
 * checked). Verified, not spent: the domain's signing step spends it (sponsorshipTokens/sponsorshipGrant.ts).
 */
async function admitSponsorshipToken(ctx: RpcContext, carrier: TokenCarrier): Promise<SponsorshipGrant | undefined> {
  const settings = ctx.dapp.sponsorshipTokens;
  if (settings === undefined) return undefined;
  return ctx.sponsorshipTokens.admit({
    settings,
    dappId: ctx.dapp.id,
    chainId: ctx.chain.chainId,
    authorization: ctx.caller.authorization,
    carrier,
  });
}

/**
 * The call's scope, built once (a batch's calls run concurrently, each with its own): its facts go to this call's
 * list when anyone observes calls, and it carries this call's verified sponsorship token.
 */
function paymasterCall(
  ctx: RpcContext,
  facts: RequestFact[] | undefined,
  grant: SponsorshipGrant | undefined,
): PaymasterCall {
  return {
    dappId: ctx.dapp.id,
    chain: ctx.chain,
    bounds: ctx.bounds,
    spend: ctx.spend,
    report:
      facts === undefined
        ? undefined
        : (fact) => {
            facts.push(fact);
          },
    grant,
  };
}

function report(args: {
  onCall: OnCall;
  ctx: RpcContext;
  method: string;
  facts: readonly RequestFact[];
  startedAt: number;
  outcome?: MethodOutcome;
  error?: RpcErrorObject;
}): void {
  const latencyMs = performance.now() - args.startedAt;
  args.onCall({
    // When the call began, from one wall-clock read at its end.
    at: Math.round(Date.now() - latencyMs),
    method: args.method,
    accountId: args.ctx.dapp.accountId,
    dappId: args.ctx.dapp.id,
    chainId: args.ctx.chain.chainId,
    facts: args.facts,
    latencyMs,
    ...(args.error !== undefined ? { error: args.error } : args.outcome === undefined ? {} : { outcome: args.outcome }),
  });
}
