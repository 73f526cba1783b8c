import { STUB_PERMIT } from '../../paymaster/entryPoints/entryPointModule.js';
import type { PaymasterCall } from '../../paymaster/paymasterCall.js';
import { feeTokenOf } from '../feeToken.js';
import type { RpcContext } from '../rpcMethod.js';
import type { Erc7677Params } from '../wire/erc7677.js';
import { erc7677Fields, gasLimitFields } from '../wire/erc7677Result.js';
import { permitTypedDataField } from '../wire/permitContext.js';
import { erc7677Target } from './erc7677Target.js';
import { committedPaymaster, v09Options } from './erc7677V09Options.js';
import { guaranteeTerms, tokenPaid } from './tokenPaid.js';

/**
 * ERC-7677's dialect (https://eips.ethereum.org/EIPS/eip-7677; viem's paymaster client, abstractjs, permissionless):
 * `[userOperation, entryPoint, chainId, context]`, the stub and then the final data, hex quantities, and the v0.9
 * parallel-signing opt-ins (erc7677V09Options.ts).
 */

type PaymasterFieldsResult = ReturnType<typeof erc7677Fields>;

export type Erc7677StubResult = PaymasterFieldsResult & {
  readonly sponsor: { readonly name: string };
  readonly isFinal: false;
  readonly permitTypedData?: ReturnType<typeof permitTypedDataField>;
};

/** The final data; `isFinal` only on v0.9's parallel signing (false: a commit, nothing signed). */
export type Erc7677DataResult = PaymasterFieldsResult &
  Partial<ReturnType<typeof gasLimitFields>> & { readonly isFinal?: boolean };

/** pm_getPaymasterStubData (the method's file says what the stub is and checks). */
export async function erc7677Stub(
  params: Erc7677Params,
  scope: PaymasterCall,
  ctx: RpcContext,
): Promise<Erc7677StubResult> {
  const { call, mode } = erc7677Target(params, scope, ctx);
  const { chain } = call;
  const userOp = params[0];
  const v09 = v09Options({ chain, mode, method: 'pm_getPaymasterStubData' });
  // The stub signs nothing, but a client should learn here, not at the final data, that its fees are refused.
  await ctx.sponsorship.assertFeesWithinBounds({ call, userOp });
  if (mode.mode === 'ERC20') {
    const tokens = ctx.tokenPaymaster;
    const feeToken = feeTokenOf(mode, 'params[3]');
    if (mode.permit !== undefined && feeToken !== undefined) await tokens.assertPermitUsable(chain, feeToken);
    // An op that batches its approval and can only be signed as the dApp's guarantee learns here if it is refused
    // (a permit in the context prefunds instead: no guarantee asked).
    if (mode.permit === undefined) {
      await tokens.precheckGuarantee({ chain, userOp, feeToken, guarantee: guaranteeTerms(ctx) });
    }
    // No permit yet: for a token with one and an account whose allowance falls short, what to sign.
    const asked =
      mode.permit === undefined && feeToken !== undefined
        ? await tokens.permitRequest({ call, userOp, feeToken, expiryDuration: mode.expiryDuration })
        : undefined;
    // Sized as the final data will be: with the context's permit, or a dummy of one when asking for it.
    const permit = mode.permit ?? (asked === undefined ? undefined : STUB_PERMIT);
    const fields = tokens.stubFields(chain, feeToken, mode.expiryDuration, permit);
    return {
      ...erc7677Fields(fields, chain.entryPointVersion),
      sponsor: { name: 'Patron' },
      isFinal: false,
      ...(asked === undefined ? {} : { permitTypedData: permitTypedDataField(asked) }),
    };
  }
  await ctx.sponsorship.precheckPolicies({
    call,
    userOp,
    sponsorshipPolicyId: mode.sponsorshipPolicyId,
    attestationUid: mode.attestationUid,
  });
  // A commit's stub has the suffixed form's length: the preVerificationGas estimated on it holds for the final op.
  const fields = ctx.sponsorship.stubFields(chain, mode.expiryDuration, {
    validityUnit: v09.validityUnit,
    signatureInSuffix: v09.signingPhase === 'commit',
  });
  return { ...erc7677Fields(fields, chain.entryPointVersion), sponsor: { name: 'Patron' }, isFinal: false };
}

/** pm_getPaymasterData (the method's file says what the final data is, with and without calculateGasLimits). */
export async function erc7677Data(
  params: Erc7677Params,
  scope: PaymasterCall,
  ctx: RpcContext,
): Promise<Erc7677DataResult> {
  const { call, mode } = erc7677Target(params, scope, ctx);
  const version = call.chain.entryPointVersion;
  const userOp = params[0];
  const v09 = v09Options({ chain: call.chain, mode, method: 'pm_getPaymasterData' });
  const calculate = mode.calculateGasLimits === true;
  // undefined: "compute what is missing" (sponsorshipService's gas rule); false: the op's limits or an error.
  const calculateGasLimits = calculate ? undefined : false;
  if (mode.mode === 'ERC20') {
    const paid = await tokenPaid({
      call,
      ctx,
      userOp,
      mode: { ...mode, calculateGasLimits },
      limitsMayChange: calculate,
      where: 'params[3]',
    });
    return { ...erc7677Fields(paid, version), ...(calculate ? gasLimitFields(paid) : {}) };
  }
  const request = {
    call,
    userOp,
    calculateGasLimits,
    // viem keeps only the paymaster fields of this answer: what it computed, the client's bundler estimates again.
    limitsMayChange: calculate,
    expiryDuration: mode.expiryDuration,
    validityUnit: v09.validityUnit,
    webhookData: mode.webhookData,
    sponsorshipPolicyId: mode.sponsorshipPolicyId,
    attestationUid: mode.attestationUid,
  };
  if (v09.signingPhase === 'commit') {
    const committed = await ctx.sponsorship.commit(request);
    return { ...erc7677Fields(committed, version), isFinal: false };
  }
  if (v09.signingPhase === 'finalize') {
    const committed = committedPaymaster(userOp.committed);
    const finalized = await ctx.sponsorship.finalize({ ...request, committed });
    return { ...erc7677Fields(finalized, version), isFinal: true };
  }
  const sponsored = await ctx.sponsorship.sponsor(request);
  return { ...erc7677Fields(sponsored, version), ...(calculate ? gasLimitFields(sponsored) : {}) };
}
