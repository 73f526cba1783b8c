import { z } from 'zod';
import { validateSponsorshipPolicies } from '../dialects/pimlico.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { address } from '../wire/scalars.js';
import { partialUserOperationSchema } from '../wire/userOperation.js';

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
  handler: ([userOp, entryPoint, ids], call, ctx) =>
    validateSponsorshipPolicies({ userOp, entryPoint, ids, call, ctx }),
  outcome: () => 'dryRun',
});
