import { z } from 'zod';
import { type BiconomyPaymasterResult, sponsorUserOperation } from '../dialects/biconomy.js';
import { type PimlicoSponsorResult, pimlicoSponsorUserOperation } from '../dialects/pimlico.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { modeObjectSchema, parseUserOperationAndModeFast } from '../wire/modeObject.js';
import { pimlicoContextSchema } from '../wire/pimlico.js';
import { address } from '../wire/scalars.js';
import { partialUserOperationSchema } from '../wire/userOperation.js';

/**
 * Two dialects on one name, told apart by `params[1]`:
 * - Biconomy's `[userOp, {mode, calculateGasLimits, expiryDuration?, tokenInfo?, sponsorshipInfo}]`, served on the
 *   URL's EntryPoint;
 * - Pimlico's and Stackup's `[userOp, entryPoint, {sponsorshipPolicyId?, validForSeconds?}?]`, served on the
 *   EntryPoint it names: the gas limits the op leaves out are computed, and the answer is Pimlico's (hex quantities,
 *   v0.6 `paymasterAndData` or the v0.7+ paymaster fields).
 */
/** `params[1]`: an EntryPoint address (Pimlico) or a mode object (Biconomy); a failure names the field within. */
const entryPointOrMode = z.unknown().transform((v, ctx) => {
  const r = typeof v === 'string' ? address.safeParse(v) : modeObjectSchema.safeParse(v);
  if (r.success) return r.data;
  for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  return z.NEVER;
});

export const pm_sponsorUserOperation = defineRpcMethod({
  method: 'pm_sponsorUserOperation',
  params: z.tuple([partialUserOperationSchema, entryPointOrMode, pimlicoContextSchema], {
    error: 'must be [userOperation, modeObject] or [userOperation, entryPoint, context?]',
  }),
  fastParams: parseUserOperationAndModeFast,
  family: ([, second, context]) => {
    const erc20 = typeof second === 'string' ? context?.token !== undefined : second.mode === 'ERC20';
    return erc20 ? 'tokenQuotes' : 'sponsorship';
  },
  sponsorshipToken: ([op, second, context]) =>
    typeof second === 'string'
      ? { contextToken: context?.sponsorshipToken, webhookData: context?.webhookData ?? {}, sender: op.sender }
      : { contextToken: second.sponsorshipToken, webhookData: second.webhookData, sender: op.sender },
  handler: (params, call, ctx): Promise<BiconomyPaymasterResult | PimlicoSponsorResult> => {
    const [userOp, second, context] = params;
    if (typeof second !== 'string') return sponsorUserOperation(userOp, second, call, ctx);
    return pimlicoSponsorUserOperation({ userOp, entryPoint: second, context, call, ctx });
  },
  // Either dialect, either mode: a signed paymasterAndData.
  outcome: () => 'signs',
});
