import type { ChainRuntime } from '../chain/chainRegistry.js';
import type { SigningBounds } from '../config/boundsSettings.js';
import type { SponsorshipGrant } from '../sponsorshipTokens/sponsorshipGrant.js';
import type { ReportFact } from './requestFacts.js';
import type { SpendGuard } from './spendGuard.js';

/**
 * One paymaster call's scope: who asks (the dApp), where (the chain and EntryPoint deployment), within what (the
 * signing bounds, the call's budget for simulations and webhook calls), on whose word (the dApp's verified
 * sponsorship token) and who listens (the request log and the metrics). The transport builds it once per call
 * (rpc/handleJsonRpc.ts) and every domain request carries it whole as `call`, so a new scope field is added here and
 * read where it is needed, never copied along the way.
 */
export interface PaymasterCall {
  readonly dappId: string;
  /** The chain, seen through the deployment of the EntryPoint the call is served on. */
  readonly chain: ChainRuntime;
  /** The signing bounds of this dApp on this chain (docs/guides/signing-bounds.md, "Signing bounds"). */
  readonly bounds: SigningBounds;
  /** The call's budget for simulations and webhook calls (the rate limits). */
  readonly spend: SpendGuard;
  /** Told what happens as the call goes (requestFacts.ts), when anyone observes calls. */
  readonly report: ReportFact | undefined;
  /**
   * The dApp's verified sponsorship token, when it sent one (docs/guides/sponsorship-tokens.md): its bounds are
   * checked, and the one step that issues a signature spends it, in either mode (policies/policyGate.ts).
   */
  readonly grant: SponsorshipGrant | undefined;
}

/**
 * The same call on another deployment of its chain (a method that names an EntryPoint): the chain id, and with it
 * the bounds and budgets, are the same; the scope is not rebuilt when the deployment is the one it has.
 */
export function callOn(call: PaymasterCall, chain: ChainRuntime): PaymasterCall {
  return chain === call.chain ? call : { ...call, chain };
}
