import type { Address, Hex } from 'viem';
import type { ChainRuntime } from '../chain/chainRegistry.js';
import { SponsorshipDeniedError, ValidationError, WebhookFailedError } from '../errors/PatronError.js';
import type { WebhookFailureReason } from '../webhooks/webhookCaller.js';
import type { WebhookCheckResult } from '../webhooks/webhookCheck.js';
import type { CryptoBackend } from './cryptoBackend.js';
import { DUMMY_SIGNATURE, estimateGasV06 } from './gasEstimatorV06.js';
import {
  eip191Digest,
  encodeSponsoredPaymasterAndData,
  sponsoredHashV06,
  type UserOperationV06,
} from './patronPaymasterV06.js';
import type { PaymasterSigner } from './paymasterSigner.js';
import type { PartialUserOperation } from './userOperationInput.js';

export interface SponsorshipPolicy {
  /** Validity when the request names no `expiryDuration` (seconds). */
  readonly defaultExpirySeconds: number;
  /** Upper bound on any requested `expiryDuration` (seconds). */
  readonly maxExpirySeconds: number;
  /** `validAfter` is set this far in the past, so a bundler whose clock lags still accepts the op. */
  readonly validAfterSkewSeconds: number;
}

export interface SponsorshipDeps {
  readonly signer: PaymasterSigner;
  readonly crypto: CryptoBackend;
  readonly policy: SponsorshipPolicy;
  readonly now: () => number;
  /** Spec §6: the dApp's webhooks decide; see webhooks/webhookCheck.ts. */
  readonly checkWebhooks: (args: { dappId: string; webhookData: Record<string, unknown> }) => Promise<WebhookCheckResult>;
}

export interface SponsorRequest {
  readonly dappId: string;
  readonly chain: ChainRuntime;
  readonly userOp: PartialUserOperation;
  /** true: compute limits; false: use the caller's (which must be present); undefined: compute if missing. */
  readonly calculateGasLimits: boolean | undefined;
  readonly expiryDuration: number | undefined;
  readonly webhookData: Record<string, unknown>;
}

export interface SponsoredUserOperation {
  readonly paymasterAndData: Hex;
  readonly callGasLimit: bigint;
  readonly verificationGasLimit: bigint;
  readonly preVerificationGas: bigint;
  readonly validUntil: number;
  readonly validAfter: number;
}

const WEBHOOK_FAILURES: Record<Exclude<WebhookFailureReason, 'denied'>, string> = {
  timeout: "the dApp's webhook did not answer in time",
  http_status: "the dApp's webhook answered with an error status",
  redirect: "the dApp's webhook answered with a redirect, which Patron does not follow",
  invalid_response: "the dApp's webhook answer has no boolean arePoliciesVerified",
  response_too_large: "the dApp's webhook answer is too large",
  connection_failed: "the dApp's webhook could not be reached",
  forbidden_address: "the dApp's webhook URL points at an address Patron may not call",
};

/** The sponsored mode: webhook verdict → gas limits → validity window → hash → signature. */
export function createSponsorshipService(deps: SponsorshipDeps) {
  const nowSeconds = () => Math.floor(deps.now() / 1000);

  const window = (expiryDuration: number | undefined) => {
    const now = nowSeconds();
    const expiry = Math.min(expiryDuration ?? deps.policy.defaultExpirySeconds, deps.policy.maxExpirySeconds);
    return { validUntil: now + expiry, validAfter: Math.max(0, now - deps.policy.validAfterSkewSeconds) };
  };

  const sign = (args: { chain: ChainRuntime; userOp: UserOperationV06; validUntil: number; validAfter: number }) => {
    const hash = sponsoredHashV06(
      { userOp: args.userOp, chainId: BigInt(args.chain.chainId), paymaster: args.chain.paymaster, validUntil: args.validUntil, validAfter: args.validAfter },
      deps.crypto,
    );
    const signature = deps.signer.sign(eip191Digest(hash, deps.crypto));
    return encodeSponsoredPaymasterAndData({ paymaster: args.chain.paymaster, validUntil: args.validUntil, validAfter: args.validAfter, signature });
  };

  /** A `paymasterAndData` of the final length with a dummy signature, for estimation (ERC-7677 stub). */
  const stubPaymasterAndData = (paymaster: Address, expiryDuration?: number): Hex => {
    const { validUntil, validAfter } = window(expiryDuration);
    return encodeSponsoredPaymasterAndData({ paymaster, validUntil, validAfter, signature: hexBytes(DUMMY_SIGNATURE) });
  };

  return {
    stubPaymasterAndData,

    async sponsor(req: SponsorRequest): Promise<SponsoredUserOperation> {
      const verdict = await deps.checkWebhooks({ dappId: req.dappId, webhookData: req.webhookData });
      if (!verdict.allowed) {
        const { reason } = verdict.failure;
        if (reason === 'denied') throw new SponsorshipDeniedError("Sponsorship denied: the dApp's webhook did not approve this user operation");
        throw new WebhookFailedError(`Sponsorship denied: ${WEBHOOK_FAILURES[reason]}`, reason);
      }
      const { validUntil, validAfter } = window(req.expiryDuration);
      const op = req.userOp;
      const given = { callGasLimit: op.callGasLimit, verificationGasLimit: op.verificationGasLimit, preVerificationGas: op.preVerificationGas };
      const missing = Object.entries(given).find(([, v]) => v === undefined)?.[0];
      if (req.calculateGasLimits === false && missing !== undefined) {
        throw new ValidationError(`Invalid params: params[0].${missing}: required when calculateGasLimits is false`);
      }
      const base: UserOperationV06 = {
        ...op,
        callGasLimit: op.callGasLimit ?? 0n,
        verificationGasLimit: op.verificationGasLimit ?? 0n,
        preVerificationGas: op.preVerificationGas ?? 0n,
        paymasterAndData: stubPaymasterAndData(req.chain.paymaster, req.expiryDuration),
      };
      const limits =
        req.calculateGasLimits === true || missing !== undefined
          ? await estimateGasV06({ chain: req.chain, userOp: base, ...(op.preVerificationGas === undefined ? {} : { callerPreVerificationGas: op.preVerificationGas }) })
          : { callGasLimit: base.callGasLimit, verificationGasLimit: base.verificationGasLimit, preVerificationGas: base.preVerificationGas };
      const final: UserOperationV06 = { ...base, ...limits };
      const paymasterAndData = sign({ chain: req.chain, userOp: final, validUntil, validAfter });
      return { paymasterAndData, ...limits, validUntil, validAfter };
    },
  };
}

export type SponsorshipService = ReturnType<typeof createSponsorshipService>;

function hexBytes(hex: Hex): Uint8Array {
  return Buffer.from(hex.slice(2), 'hex');
}
