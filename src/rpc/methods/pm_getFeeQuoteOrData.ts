import { z } from 'zod';
import { feeQuoteOrData } from '../dialects/biconomy.js';
import { defineRpcMethod } from '../rpcMethod.js';
import { modeObjectSchema, parseUserOperationAndModeFast } from '../wire/modeObject.js';
import { partialUserOperationSchema } from '../wire/userOperation.js';

/** Spec §4.2: sponsored data (mode SPONSORED, or no mode) or token fee quotes (mode ERC20). */
export const pm_getFeeQuoteOrData = defineRpcMethod({
  method: 'pm_getFeeQuoteOrData',
  params: z.tuple([partialUserOperationSchema, modeObjectSchema], { error: 'must be [userOperation, modeObject]' }),
  fastParams: parseUserOperationAndModeFast,
  family: ([, mode]) => (mode.mode === 'ERC20' ? 'tokenQuotes' : 'sponsorship'),
  sponsorshipToken: ([op, mode]) => ({
    contextToken: mode.sponsorshipToken,
    webhookData: mode.webhookData,
    sender: op.sender,
  }),
  handler: ([userOp, mode], call, ctx) => feeQuoteOrData(userOp, mode, call, ctx),
  outcome: (result) => ('feeQuotes' in result ? 'quotes' : 'signs'),
});
