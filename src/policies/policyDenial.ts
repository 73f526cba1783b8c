import type { Address, Hex } from 'viem';
import type { CapScope, CapUnit } from './policySchema.js';

/**
 * The policy engine's refusals as the wire carries them (the JSON-RPC error's `data`): which rule, and the facts it
 * names. The rules (policyRules.ts) and the gating reads (gatingRules.ts) both speak it, so it stands apart from both.
 */
export type PolicyRule =
  | 'policyNotFound'
  | 'noPolicyApplies'
  | 'senderBlocked'
  | 'senderNotAllowed'
  | 'deploymentNotSponsored'
  | 'maxFeePerGas'
  | 'unknownAccount'
  | 'undecodableCall'
  | 'contractNotAllowed'
  | 'methodNotAllowed'
  | 'priceUnavailable'
  | 'userRequired'
  | 'cap'
  /** A caller or sender holds its share of a cap in signatures not yet included (holdCharges.ts). */
  | 'hold'
  | 'attestationMissing'
  | 'nftMissing'
  | 'balanceTooLow';

/** Why a request was denied, in the machine-readable form the JSON-RPC error's `data` carries. */
export interface PolicyDenial {
  readonly rule: PolicyRule;
  readonly message: string;
  readonly policyId?: string;
  readonly policyName?: string;
  readonly value?: string;
  readonly limit?: string;
  readonly selector?: Hex;
  readonly contract?: Address;
  /** unknownAccount: the sender and what Patron found of it (policies/knownAccounts.ts SenderFound). */
  readonly sender?: Address;
  readonly codeHash?: Hex;
  readonly implementation?: Address;
  readonly delegate?: Address;
  readonly factory?: Address;
  /** A cap's scope; for a `hold`, the party holding: the caller or the sender. */
  readonly scope?: CapScope | 'caller';
  readonly unit?: CapUnit;
  readonly used?: string;
  readonly reserved?: string;
  /** Unix seconds when the cap's window ends; absent for caps that never reset. */
  readonly resetsAt?: number;
  /** Gating rules (policies/gatingRules.ts): why, whose holdings (`sender` or `user`) and the address read. */
  readonly reason?: GatingReason;
  readonly subject?: 'sender' | 'user';
  readonly holder?: Address;
  /** attestationMissing: the EAS contract, the schema required and the uid the request named. */
  readonly eas?: Address;
  readonly schema?: Hex;
  readonly uid?: Hex;
  /** nftMissing: the standard, the token id (ERC-1155), the count required and the count held. */
  readonly standard?: 'erc721' | 'erc1155';
  readonly tokenId?: string;
  readonly minCount?: string;
  readonly count?: string;
  /** balanceTooLow: the ERC-20 (or `native`), the minimum and the balance held, in base units. */
  readonly token?: Address | 'native';
  readonly min?: string;
  readonly balance?: string;
}

export type GatingReason =
  | 'noUserAddress'
  | 'readFailed'
  | 'noAttestationUid'
  | 'notFound'
  | 'wrongSchema'
  | 'wrongAttester'
  | 'wrongRecipient'
  | 'revoked'
  | 'expired'
  | 'tooOld'
  | 'tooFew'
  | 'tooLow';
