import type { z } from 'zod';
import type { ChainRuntime, EntryPointVersion } from '../chain/chainRegistry.js';
import type { SigningBounds } from '../config/boundsSettings.js';
import type { MethodFamily } from '../dappSettings/callerRestrictions.js';
import { ValidationError } from '../errors/PatronError.js';
import type { PaymasterCall } from '../paymaster/paymasterCall.js';
import type { SponsorshipService } from '../paymaster/sponsored/sponsorshipService.js';
import type { TokenPaymasterService } from '../paymaster/token/tokenPaymasterService.js';
import type { DappSpend } from '../rateLimit/requestLimits.js';
import type { SponsorshipTokenGate, TokenCarrier } from '../sponsorshipTokens/sponsorshipTokenGate.js';
import type { DappRecord } from '../store/records.js';

/**
 * What one HTTP request on a paymaster URL resolved once for all the calls of its body: the dApp and chain the URL
 * selects, who is calling, and the domain services. Each call's own scope is its PaymasterCall (built from this by
 * the envelope, rpc/handleJsonRpc.ts).
 */
export interface RpcContext {
  readonly dapp: DappRecord;
  /**
   * The chain, seen through the deployment of the URL's EntryPoint version when it has one (else its first):
   * what a call that names no EntryPoint is served on. Calls that name one select it (rpc/servedChain.ts).
   */
  readonly chain: ChainRuntime;
  /** The EntryPoint version the URL stands for (api/paymasterRpc.ts PAYMASTER_URLS). */
  readonly urlEntryPointVersion: EntryPointVersion;
  /** The signing bounds of this dApp on this chain (docs/guides/signing-bounds.md, "Signing bounds"). */
  readonly bounds: SigningBounds;
  /** The sponsored mode. */
  readonly sponsorship: SponsorshipService;
  /** The token mode: the user pays gas in an ERC-20 (quotes, token-paid paymasterAndData). */
  readonly tokenPaymaster: TokenPaymasterService;
  /** Checks the dApp's sponsorship tokens (sponsorshipTokens/sponsorshipTokenGate.ts). */
  readonly sponsorshipTokens: SponsorshipTokenGate;
  /** Who is calling, as the key's caller restrictions see it (dappSettings/callerRestrictions.ts). */
  readonly caller: CallerFacts;
  /** This dApp's rate limits for the client IP: each call, and the simulations and webhook calls it asks for. */
  readonly spend: DappSpend;
}

/** The request's `Origin` header (absent: undefined) and the client IP behind the trusted proxies (Fastify's req.ip). */
export interface CallerFacts {
  readonly origin: string | undefined;
  readonly ip: string;
  /** The request's `Authorization` header, one carrier of a sponsorship token (absent: undefined). */
  readonly authorization: string | undefined;
}

/**
 * How a call that answered ended, as its method declares it from its own result (the request log and the metrics
 * read this, rpc/callOutcome.ts): `signs` a paymasterAndData the chain will accept, `quotes` terms without a usable
 * signature (fee quotes, the ERC-7677 stub, the EntryPoints served), `dryRun` the policies' verdict.
 */
export type MethodOutcome = 'signs' | 'quotes' | 'dryRun';

/**
 * One JSON-RPC method: its wire name, the zod schema of its `params` (which drives parsing, typing and the
 * -32602 messages), a thin handler that calls the domain with the call's scope and returns its typed wire result,
 * and the outcome that result stands for. Registered in an explicit list (registry.ts).
 * A hot method may add `fastParams`: a hand-written parser for the common shape that returns exactly what the
 * schema would, or undefined when it is not sure, and then the schema runs (see wire/scalars.ts).
 */
export interface RpcMethod<P, R> {
  readonly method: string;
  readonly params: z.ZodType<P>;
  readonly fastParams?: (params: unknown) => P | undefined;
  /**
   * The family a key's owner may allow or not (docs/guides/security-keys.md): from the params where the mode
   * decides (ERC20 is `tokenQuotes`, whatever the method); undefined for a method of none (pm_supportedEntryPoints).
   */
  family(params: P): MethodFamily | undefined;
  /**
   * Where this call carries a sponsorship token (its context, its webhookData, its op's sender), for a method on
   * the sponsorship path; absent for one that is not (pm_supportedEntryPoints), which no token setting gates.
   */
  readonly sponsorshipToken?: (params: P) => TokenCarrier;
  handler(params: P, call: PaymasterCall, ctx: RpcContext): Promise<R>;
  outcome(result: R): MethodOutcome;
}

/** What the envelope does between a call's params and its handler, given the method's reading of the params. */
export interface CallAdmission {
  /**
   * The key's caller restrictions for this family, the dApp's sponsorship token where the call carries one, the
   * dApp's call budget; then the call's scope, built once.
   */
  admit(family: MethodFamily | undefined, carrier: TokenCarrier | undefined): Promise<AdmittedCall>;
}

export interface AdmittedCall {
  readonly call: PaymasterCall;
  readonly ctx: RpcContext;
}

/** A method as the envelope runs it: params in, the wire result and its declared outcome out. */
export interface RegisteredMethod {
  readonly method: string;
  serve(
    params: unknown,
    admission: CallAdmission,
  ): Promise<{ readonly result: unknown; readonly outcome: MethodOutcome }>;
}

export function defineRpcMethod<P, R>(m: RpcMethod<P, R>): RegisteredMethod {
  return {
    method: m.method,
    async serve(raw, admission) {
      const params = parseParams(m, raw);
      const { call, ctx } = await admission.admit(m.family(params), m.sponsorshipToken?.(params));
      const result = await m.handler(params, call, ctx);
      return { result, outcome: m.outcome(result) };
    },
  };
}

/** Parses `params`; the -32602 message names the failing field (`params[0].sender`) and what was wrong. */
function parseParams<P>(method: Pick<RpcMethod<P, never>, 'params' | 'fastParams'>, params: unknown): P {
  const fast = method.fastParams?.(params);
  if (fast !== undefined) return fast;
  const r = method.params.safeParse(params);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue === undefined ? 'params' : formatPath(issue.path);
  throw new ValidationError(`Invalid params: ${where}: ${issue?.message ?? 'invalid'}`);
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : `${acc}.${String(p)}`), 'params');
}
