import { z } from 'zod';
import {
  modeObjectSchema,
  parseUserOperationAndModeFast,
  partialUserOperationSchema,
} from '../../paymaster/userOperationInput.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { sponsorUserOperation } from '../sponsoredResult.js';

const PIMLICO_DIALECT =
  'params[1] is an EntryPoint address (the Pimlico/Stackup pm_sponsorUserOperation dialect), which Patron does not serve: ' +
  'send the Biconomy mode object ({"mode":"SPONSORED", ...}) as params[1], or use ERC-7677 pm_getPaymasterStubData / pm_getPaymasterData';

/** Biconomy dialect: `[userOp, {mode, calculateGasLimits, expiryDuration?, tokenInfo?, sponsorshipInfo}]`. */
export const pm_sponsorUserOperation = defineRpcMethod({
  method: 'pm_sponsorUserOperation',
  params: z.tuple(
    [
      partialUserOperationSchema,
      z
        .unknown()
        .superRefine((v, ctx) => {
          if (typeof v === 'string') ctx.addIssue({ code: 'custom', message: PIMLICO_DIALECT });
        })
        .pipe(modeObjectSchema),
    ],
    { error: 'must be [userOperation, modeObject]' },
  ),
  fastParams: parseUserOperationAndModeFast,
  handler: ([userOp, mode], ctx) => sponsorUserOperation(userOp, mode, ctx),
});
