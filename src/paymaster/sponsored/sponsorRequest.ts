import type { Hex } from 'viem';
import type { ChainRuntime } from '../../chain/chainRegistry.js';
import { ValidationError } from '../../errors/PatronError.js';
import type { PartialUserOperation } from '../partialUserOperation.js';
import type { PaymasterCall } from '../paymasterCall.js';
import type { IssuedWindow, ValidityUnit } from '../validityWindows.js';
import type { CommittedPaymaster } from './parallelSigningCommitment.js';

/**
 * What a sponsorship request is, what the signed answer is, and the small rules about a request that the sponsored
 * mode (sponsorshipService.ts) and its v0.9 parallel-signing steps (parallelSigning.ts) share.
 */
export interface SponsorRequest {
  /** The call's scope: the dApp, the chain, the bounds, the budgets, the sponsorship token, the listeners. */
  readonly call: PaymasterCall;
  readonly userOp: PartialUserOperation;
  /** true: compute limits; false: use the caller's (which must be present); undefined: compute if missing. */
  readonly calculateGasLimits: boolean | undefined;
  readonly expiryDuration: number | undefined;
  readonly webhookData: Record<string, unknown>;
  /** The policy the request names (`sponsorshipPolicyId`), if any; every policy that applies is checked anyway. */
  readonly sponsorshipPolicyId?: string | undefined;
  /** The EAS attestation uid the context names, for a policy's attestation rule (policies/gatingRules.ts). */
  readonly attestationUid?: Hex | undefined;
  /**
   * The client's bundler estimates the gas after this answer (an ERC-7677 data call made before estimation, as
   * @biconomy/abstractjs does through viem): on v0.7+ the signature then binds bounds with headroom over the limits
   * Patron computed instead of the limits themselves (gasCapsFor).
   */
  readonly limitsMayChange?: boolean | undefined;
  /** EntryPoint v0.9: the window in block numbers instead of seconds (validityWindows.ts). */
  readonly validityUnit?: ValidityUnit | undefined;
  /** EntryPoint v0.9: the signature in the `paymasterSignature` suffix, outside the userOpHash (parallel signing). */
  readonly signatureInSuffix?: boolean | undefined;
}

/** A parallel-signing finalize: the op carries the paymaster fields a commit returned (parallelSigningCommitment.ts). */
export interface FinalizeRequest extends SponsorRequest {
  readonly committed: CommittedPaymaster;
}

/** The first gas limit the caller left out, in the order the error names them. */
export function firstMissingLimit(op: PartialUserOperation): string | undefined {
  if (op.callGasLimit === undefined) return 'callGasLimit';
  if (op.verificationGasLimit === undefined) return 'verificationGasLimit';
  if (op.preVerificationGas === undefined) return 'preVerificationGas';
  return undefined;
}

/** A request as the pipeline signs it; a finalize adds the commit's window and prefix (FinalizeRequest). */
export interface SigningRequest extends SponsorRequest {
  readonly window?: IssuedWindow | undefined;
  readonly prefix?: Hex | undefined;
}

export /** The parallel-signing suffix and block windows are EntryPoint v0.9's; on another version the request is wrong. */
function assertV09(chain: ChainRuntime, what: string): void {
  if (chain.entryPointVersion !== '0.9') {
    throw new ValidationError(
      `${what} is served on EntryPoint v0.9 only; ${chain.entryPoint} is v${chain.entryPointVersion}`,
    );
  }
}
