import type { Address, Hex } from 'viem';
import type { ChainRuntime } from '../chain/chainRegistry.js';
import type { GatingReads } from '../chain/gatingReads.js';
import type { ChainReads } from '../chain/senderCode.js';
import type { GatingReader } from '../policies/gatingRules.js';
import { knownAccountsOf, resolveSenderAccount } from '../policies/knownAccounts.js';
import type { PolicyRequest } from '../policies/policyGate.js';
import type { PaymasterFields } from './entryPoints/entryPointModule.js';
import type { PartialUserOperation } from './partialUserOperation.js';
import type { PaymasterCall } from './paymasterCall.js';

/**
 * What the sponsored and the token mode's requests and answers share: the deployment's signing policy, the signed
 * answer's fields, and the policy rules' view of a request.
 */
export interface SponsorshipPolicy {
  /** Validity when the request names no `expiryDuration` (seconds). */
  readonly defaultExpirySeconds: number;
  /** Upper bound on any requested `expiryDuration` (seconds). */
  readonly maxExpirySeconds: number;
  /** `validAfter` is set this far in the past, so a bundler whose clock lags still accepts the op. */
  readonly validAfterSkewSeconds: number;
  /** The EIP-7702 delegates sponsored (config/eip7702Delegates.ts). */
  readonly eip7702Delegates: readonly Address[];
}

/** A signed answer: the paymaster's fields, the op's three gas limits as signed, and the window. */
export interface SponsoredUserOperation extends PaymasterFields {
  readonly callGasLimit: bigint;
  readonly verificationGasLimit: bigint;
  readonly preVerificationGas: bigint;
  readonly validUntil: number;
  readonly validAfter: number;
}

/**
 * The policy rules' view of a request, in either mode; a contract allowlist asks what the sender is
 * (policies/knownAccounts.ts), read from the chain only then.
 */
export function policyRequest(
  req: {
    readonly call: PaymasterCall;
    readonly userOp: PartialUserOperation;
    readonly sponsorshipPolicyId?: string | undefined;
    readonly attestationUid?: Hex | undefined;
  },
  deps: { readonly chainReads: ChainReads; readonly gatingReads?: GatingReads | undefined },
): PolicyRequest {
  const reads = deps.chainReads;
  const gating = deps.gatingReads;
  const { call, userOp } = req;
  const { chain, grant } = call;
  return {
    dappId: call.dappId,
    chainId: chain.chainId,
    sender: userOp.sender,
    // The dApp's verified sponsorship token, when the call carried one: its `sub` is the policies' `user`.
    user: grant?.claims.sub,
    userAddress: grant?.claims.addr,
    initCode: userOp.initCode,
    callData: userOp.callData,
    maxFeePerGas: userOp.maxFeePerGas,
    requestedPolicyId: req.sponsorshipPolicyId,
    senderAccount: () => resolveSenderAccount({ chain, reads, known: knownAccountsOf(chain), op: userOp }),
    attestationUid: req.attestationUid,
    gating: gating === undefined ? undefined : gatingReaderOf(gating, chain),
    holds: holdsOf(call),
  };
}

/**
 * Who holds what the request reserves, and how much of a cap one holder may: the person a sponsorship token names
 * (the dApp's backend vouches for them), else the caller's IP (SpendGuard's `holder`).
 */
function holdsOf(call: PaymasterCall): PolicyRequest['holds'] {
  const sub = call.grant?.claims.sub;
  return {
    holder: sub === undefined ? call.spend.holder : `user:${sub}`,
    perCallerPercent: call.bounds.holdSharePerCallerPercent,
    perSenderPercent: call.bounds.holdSharePerSenderPercent,
  };
}

const readers = new WeakMap<GatingReads, WeakMap<ChainRuntime, GatingReader>>();

/**
 * The gating reads bound to one chain (the cache's keys carry it, so an answer never crosses chains), built once
 * per chain: the request path allocates nothing for them when no gating rule applies.
 */
function gatingReaderOf(gating: GatingReads, chain: ChainRuntime): GatingReader {
  let byChain = readers.get(gating);
  if (byChain === undefined) {
    byChain = new WeakMap();
    readers.set(gating, byChain);
  }
  let reader = byChain.get(chain);
  if (reader === undefined) {
    reader = {
      balance: (call) => gating.balance(chain, call),
      attestation: (args) => gating.attestation(chain, args),
    };
    byChain.set(chain, reader);
  }
  return reader;
}
