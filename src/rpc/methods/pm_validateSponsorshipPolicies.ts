import { z } from 'zod';
import { PolicyDeniedError, SponsorshipDeniedError } from '../../errors/PatronError.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { address } from '../wire/scalars.js';
import { partialUserOperationSchema } from '../wire/userOperation.js';
import { erc7677Target } from './erc7677Target.js';

/**
 * The dry run, in Pimlico's name and shape: `[userOperation, entryPoint, sponsorshipPolicyIds]` → the requested
 * policies that would sponsor the op now, each as `{ sponsorshipPolicyId, data: { name, author, icon,
 * description } }`. It runs every check the final call makes (signing bounds, every applying policy's rules,
 * the webhook, the gas limits — simulated when the op leaves them out — and the caps against the counters as they
 * are) but signs and reserves nothing. A denial (a policy's, or the webhook's) answers `[]`, as Pimlico does; the
 * reason comes with the stub or the final call. Other failures (bounds, a webhook with no verdict, a failed
 * simulation, bad params) are errors as they would be there.
 */
export const pm_validateSponsorshipPolicies = defineRpcMethod({
  method: 'pm_validateSponsorshipPolicies',
  params: z.tuple(
    [
      partialUserOperationSchema,
      address,
      z
        .array(z.string({ error: 'must be a policy id' }).min(1).max(100), { error: 'must be an array of policy ids' })
        .min(1, { error: 'must name at least one policy' })
        .max(20, { error: 'must name at most 20 policies' }),
    ],
    { error: 'must be [userOperation, entryPoint, sponsorshipPolicyIds]' },
  ),
  family: () => 'dryRun',
  // No context: the Authorization header carries the token of a dry run.
  sponsorshipToken: ([op]) => ({ contextToken: undefined, webhookData: {}, sender: op.sender }),
  async handler([userOp, entryPoint, ids], ctx) {
    const { chain } = erc7677Target([userOp, entryPoint, BigInt(ctx.chain.chainId)], ctx);
    let applying: readonly { id: string; name: string }[];
    try {
      ({ policies: applying } = await ctx.sponsorship.validate({
        dappId: ctx.dapp.id,
        chain,
        userOp,
        calculateGasLimits: undefined,
        expiryDuration: undefined,
        webhookData: {},
        bounds: ctx.bounds,
        spend: ctx.spend,
        report: ctx.report,
        token: ctx.token,
      }));
    } catch (err) {
      if (err instanceof PolicyDeniedError || err instanceof SponsorshipDeniedError) return [];
      throw err;
    }
    // Every applying policy passed; a requested one is willing when it is among them.
    return ids.flatMap((id) => {
      const p = applying.find((a) => a.id === id);
      return p === undefined
        ? []
        : [{ sponsorshipPolicyId: p.id, data: { name: p.name, author: null, icon: null, description: null } }];
    });
  },
});
