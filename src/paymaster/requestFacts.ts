import type { Address, Hex } from 'viem';
import type { PolicyDecision } from '../policies/policyGate.js';
import type { UserOperationV06 } from './patronPaymasterV06.js';

/**
 * What the domain tells about one paymaster request as it goes, for whoever observes calls (the request log,
 * the metrics): reported through one callback the transport passes in, never written into a shared object.
 * A request that fails half-way has reported what it got to.
 */
export type RequestFact =
  | { readonly kind: 'op'; readonly mode: 'SPONSORED' | 'ERC20'; readonly sender: Address }
  /** The webhook check: allowed or not, the failure reason, its wall-clock time and how many were called. */
  | {
      readonly kind: 'webhook';
      readonly allowed: boolean;
      readonly reason?: string;
      readonly latencyMs: number;
      readonly calls: number;
    }
  /** The policies passed and the caps were reserved (or none applied). */
  | { readonly kind: 'policy'; readonly decision: PolicyDecision }
  /**
   * A signature was issued. The op is final (paymasterAndData included), so its userOpHash can be computed by
   * the observer, off the request path; `worstCaseWei` is what the EntryPoint may charge the paymaster.
   */
  | {
      readonly kind: 'signed';
      readonly mode: 'SPONSORED' | 'ERC20';
      readonly userOp: UserOperationV06;
      readonly entryPoint: Address;
      readonly chainId: number;
      readonly paymaster: Address;
      readonly worstCaseWei: bigint;
      readonly validUntil: number;
      readonly paymasterAndData: Hex;
    };

export type ReportFact = (fact: RequestFact) => void;

/** A signature as it is issued, for the solvency guard's liabilities: what the EntryPoint may charge, until when. */
export interface IssuedSignature {
  readonly chainId: number;
  readonly userOp: UserOperationV06;
  readonly entryPoint: Address;
  readonly worstCaseWei: bigint;
  /** Unix seconds. */
  readonly validUntil: number;
}
