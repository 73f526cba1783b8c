import { ValidationError } from '../../errors/PatronError.js';
import type { TokenPermit } from '../../paymaster/entryPoints/paymasterModes.js';
import type { PartialUserOperation } from '../../paymaster/partialUserOperation.js';
import type { PaymasterCall } from '../../paymaster/paymasterCall.js';
import { type GuaranteeTerms, guaranteeTermsOf } from '../../paymaster/token/guaranteeTerms.js';
import { feeTokenOf } from '../feeToken.js';
import type { RpcContext } from '../rpcMethod.js';
import type { ModeObject } from '../wire/modeObject.js';

/**
 * The token mode's final data, as every dialect asks it (Biconomy's mode object, Pimlico's context token, ERC-7677's
 * context): `calculateGasLimits` is the caller's (ERC-7677 passes false), `limitsMayChange` as sponsorship's (an
 * ERC-7677 data call before the bundler's estimate), `where` names the params field in a refusal.
 */
export function tokenPaid(args: {
  readonly call: PaymasterCall;
  readonly ctx: RpcContext;
  readonly userOp: PartialUserOperation;
  readonly mode: ModeObject & { readonly permit?: TokenPermit | undefined };
  readonly limitsMayChange?: boolean;
  readonly where: string;
}) {
  const { mode, where } = args;
  const feeToken = feeTokenOf(mode, where);
  if (feeToken === undefined) {
    throw new ValidationError(
      `Invalid params: ${where}.tokenInfo.feeTokenAddress: required in ERC20 mode (or ${where}.token)`,
    );
  }
  return args.ctx.tokenPaymaster.sponsor({
    call: args.call,
    // Asked only when the op needs the dApp's guarantee (it batches its approval: mode 2).
    webhookData: mode.webhookData ?? {},
    sponsorshipPolicyId: mode.sponsorshipPolicyId,
    attestationUid: mode.attestationUid,
    userOp: args.userOp,
    feeToken,
    calculateGasLimits: mode.calculateGasLimits,
    expiryDuration: mode.expiryDuration,
    limitsMayChange: args.limitsMayChange === true,
    guarantee: guaranteeTerms(args.ctx),
    permit: mode.permit,
  });
}

/** Mode 2 is sponsorship: only for a dApp that turned guarantees on, through a key that may ask for sponsorship. */
export const guaranteeTerms = (ctx: RpcContext): GuaranteeTerms =>
  guaranteeTermsOf({ guarantees: ctx.dapp.tokenGuarantees, methods: ctx.dapp.restrictions.rules?.methods });
