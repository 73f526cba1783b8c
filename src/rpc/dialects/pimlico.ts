import { PolicyDeniedError, SponsorshipDeniedError } from '../../errors/PatronError.js';
import type { TokenPermit } from '../../paymaster/entryPoints/paymasterModes.js';
import type { PartialUserOperation } from '../../paymaster/partialUserOperation.js';
import { callOn, type PaymasterCall } from '../../paymaster/paymasterCall.js';
import type { RpcContext } from '../rpcMethod.js';
import { assertUrlChainId, entryPointChain } from '../servedChain.js';
import { erc7677Fields, gasLimitFields } from '../wire/erc7677Result.js';
import type { ModeObject } from '../wire/modeObject.js';
import { type PimlicoContext, tokenQuotesResult } from '../wire/pimlico.js';
import { tokenPaid } from './tokenPaid.js';

/**
 * Pimlico's dialect (what permissionless sends, and Stackup's): the EntryPoint named in the params, a context object
 * for the options, hex quantities, and v0.6's `paymasterAndData` or the v0.7+ paymaster fields (wire/erc7677Result.ts).
 */

export type PimlicoSponsorResult = ReturnType<typeof erc7677Fields> & ReturnType<typeof gasLimitFields>;

/**
 * Pimlico's pm_sponsorUserOperation (permissionless `sponsorUserOperation`): the EntryPoint it names, the limits
 * the op leaves out computed, the answer in hex with v0.6's paymasterAndData or v0.7's paymaster fields. A
 * `token` in the context is the ERC20 mode in that token, with the context's policy, window and webhookData.
 */
export async function pimlicoSponsorUserOperation(args: {
  readonly userOp: PartialUserOperation;
  readonly entryPoint: string;
  readonly context: PimlicoContext;
  readonly call: PaymasterCall;
  readonly ctx: RpcContext;
}): Promise<PimlicoSponsorResult> {
  const { userOp, context, ctx } = args;
  const call = callOn(args.call, entryPointChain(ctx, args.entryPoint, 'params[1]'));
  const version = call.chain.entryPointVersion;
  if (context?.token !== undefined) {
    const mode: ModeObject & { readonly permit?: TokenPermit | undefined } = {
      mode: 'ERC20',
      token: context.token,
      calculateGasLimits: undefined,
      expiryDuration: context.validForSeconds,
      webhookData: context.webhookData ?? {},
      tokenInfo: undefined,
      sponsorshipPolicyId: context.sponsorshipPolicyId,
      attestationUid: context.attestationUid,
      sponsorshipToken: context.sponsorshipToken,
      permit: context.permit,
    };
    const paid = await tokenPaid({ call, ctx, userOp, mode, where: 'params[2]' });
    return { ...gasLimitFields(paid), ...erc7677Fields(paid, version) };
  }
  const s = await ctx.sponsorship.sponsor({
    call,
    userOp,
    calculateGasLimits: undefined,
    expiryDuration: context?.validForSeconds,
    webhookData: context?.webhookData ?? {},
    sponsorshipPolicyId: context?.sponsorshipPolicyId,
    attestationUid: context?.attestationUid,
  });
  return { ...gasLimitFields(s), ...erc7677Fields(s, version) };
}

/**
 * `pimlico_getTokenQuotes([{ tokens }, entryPoint, chainId])`: per requested token the chain can price now, its
 * marked-up exchange rate and the postOp gas (paymaster/token/tokenRateQuotes.ts), for the paymaster of the EntryPoint
 * named.
 */
export function tokenQuotes(args: {
  readonly tokens: readonly string[];
  readonly entryPoint: string;
  readonly chainId: bigint;
  readonly ctx: RpcContext;
}): ReturnType<typeof tokenQuotesResult> {
  const { ctx } = args;
  const chain = entryPointChain(ctx, args.entryPoint, 'params[1]');
  assertUrlChainId(ctx, args.chainId, 'params[2]');
  return tokenQuotesResult(ctx.tokenPaymaster.rateQuotes(chain, args.tokens));
}

/** One policy that would sponsor the op, in Pimlico's shape. */
export interface WillingPolicy {
  readonly sponsorshipPolicyId: string;
  readonly data: { readonly name: string; readonly author: null; readonly icon: null; readonly description: null };
}

/**
 * pm_validateSponsorshipPolicies: the requested policies that would sponsor the op now. A denial (a policy's, or the
 * webhook's) answers `[]`, as Pimlico does; other failures are errors as they would be at the final call.
 */
export async function validateSponsorshipPolicies(args: {
  readonly userOp: PartialUserOperation;
  readonly entryPoint: string;
  readonly ids: readonly string[];
  readonly call: PaymasterCall;
  readonly ctx: RpcContext;
}): Promise<WillingPolicy[]> {
  const { ctx } = args;
  const call = callOn(args.call, entryPointChain(ctx, args.entryPoint, 'params[1]'));
  let applying: readonly { id: string; name: string }[];
  try {
    ({ policies: applying } = await ctx.sponsorship.validate({
      call,
      userOp: args.userOp,
      calculateGasLimits: undefined,
      expiryDuration: undefined,
      webhookData: {},
    }));
  } catch (err) {
    if (err instanceof PolicyDeniedError || err instanceof SponsorshipDeniedError) return [];
    throw err;
  }
  // Every applying policy passed; a requested one is willing when it is among them.
  return args.ids.flatMap((id) => {
    const p = applying.find((a) => a.id === id);
    return p === undefined
      ? []
      : [{ sponsorshipPolicyId: p.id, data: { name: p.name, author: null, icon: null, description: null } }];
  });
}
