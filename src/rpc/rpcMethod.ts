import type { z } from 'zod';
import type { ChainRuntime, EntryPointVersion } from '../chain/chainRegistry.js';
import type { SigningBounds } from '../config/boundsSettings.js';
import type { MethodFamily } from '../dappSettings/callerRestrictions.js';
import type { ReportFact } from '../paymaster/requestFacts.js';
import type { SponsorshipService } from '../paymaster/sponsored/sponsorshipService.js';
import type { TokenPaymasterService } from '../paymaster/token/tokenPaymasterService.js';
import type { DappSpend } from '../rateLimit/requestLimits.js';
import type { SponsorshipTokenGate, TokenCarrier } from '../sponsorshipTokens/sponsorshipTokenGate.js';
import type { SponsorshipGrant } from '../sponsorshipTokens/sponsorshipGrant.js';
import type { DappRecord } from '../store/records.js';

/** What every method handler gets: the dApp and chain selected by the URL, and the domain services. */
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
  readonly sponsorship: SponsorshipService;
  readonly tokens: TokenPaymasterService;
  /** Checks the dApp's sponsorship tokens (sponsorshipTokens/sponsorshipTokenGate.ts). */
  readonly tokenGate: SponsorshipTokenGate;
  /** Who is calling, as the key's caller restrictions see it (dappSettings/callerRestrictions.ts). */
  readonly caller: CallerFacts;
  /** This dApp's rate limits for the client IP: each call, and the simulations and webhook calls it asks for. */
  readonly spend: DappSpend;
  /**
   * Where this call's domain facts go (requestFacts.ts), when anyone observes calls. Context builders set it to
   * undefined up front: handleJsonRpc copies the context per call and sets it, and a copy whose shape already
   * has the slot costs ~40 ns, one that gains a property ~900 ns (V8).
   */
  readonly report?: ReportFact | undefined;
  /**
   * This call's verified sponsorship token (docs/guides/sponsorship-tokens.md), set by handleJsonRpc on its per-call
   * copy like `report` (builders set it to undefined up front, for the same reason); handlers pass it on to the
   * domain, whose signing step spends it.
   */
  readonly token?: SponsorshipGrant | undefined;
}

/** The request's `Origin` header (absent: undefined) and the client IP behind the trusted proxies (Fastify's req.ip). */
export interface CallerFacts {
  readonly origin: string | undefined;
  readonly ip: string;
  /** The request's `Authorization` header, one carrier of a sponsorship token (absent: undefined). */
  readonly authorization: string | undefined;
}

/**
 * One JSON-RPC method: its wire name, the zod schema of its `params` (which drives parsing, typing and the
 * -32602 messages), and a thin handler that calls the domain. Registered in an explicit list (registry.ts).
 * A hot method may add `fastParams`: a hand-written parser for the common shape that returns exactly what the
 * schema would, or undefined when it is not sure, and then the schema runs (see wire/scalars.ts).
 */
export interface RpcMethod<P = unknown> {
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
  handler(params: P, ctx: RpcContext): Promise<unknown>;
}

export function defineRpcMethod<P>(m: RpcMethod<P>): RpcMethod<unknown> {
  return m as unknown as RpcMethod<unknown>;
}
