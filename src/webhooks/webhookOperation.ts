import type { Address, Hex } from 'viem';
import type { EntryPointVersion } from '../chain/chainRegistry.js';

/**
 * The op a webhook is shown, as the webhook needs it: the fields it serializes, declared here so that webhooks/
 * depends on no other domain (the paymaster's FinalUserOperation satisfies it structurally).
 */
export interface WebhookUserOperation {
  readonly sender: Address;
  readonly nonce: bigint;
  readonly initCode: Hex;
  readonly callData: Hex;
  readonly callGasLimit: bigint;
  readonly verificationGasLimit: bigint;
  readonly preVerificationGas: bigint;
  readonly maxFeePerGas: bigint;
  readonly maxPriorityFeePerGas: bigint;
  readonly signature: Hex;
  readonly paymasterVerificationGasLimit: bigint;
  readonly paymasterPostOpGasLimit: bigint;
  /** v0.7+: the upper bounds the signature binds instead of the three account gas values, when it binds bounds. */
  readonly gasCaps?:
    | {
        readonly callGasLimit: bigint;
        readonly verificationGasLimit: bigint;
        readonly preVerificationGas: bigint;
      }
    | undefined;
}

/**
 * What a webhook with `includeOperation` is shown besides `data` (docs/guides/webhooks.md, "Webhooks"): the op Patron is about
 * to sign for, with its final gas limits, and where and under what it would be paid. The spec (§6) has only
 * `{data}`; this is Patron's extension, off by default, so a receiver written for the spec sees no change.
 */
export interface WebhookOperation {
  /**
   * ERC20: a token-mode op whose charge the dApp guarantees (it batches its approval: docs/guides/token-mode.md, "Paying gas in
   * ERC-20"); absent: a sponsored op.
   */
  readonly mode?: 'SPONSORED' | 'ERC20' | undefined;
  /** The op as it will be signed, except the paymaster data: that holds the signature, made after the verdict. */
  readonly userOperation: WebhookUserOperation;
  readonly chainId: number;
  readonly entryPointVersion: EntryPointVersion;
  readonly entryPoint: Address;
  readonly paymaster: Address;
  readonly dappId: string;
  /** The dApp's policies that apply to the op (their rules passed); empty when it has none. */
  readonly policyIds: readonly string[];
  /** The most the EntryPoint can charge the paymaster for the op: its prefund, at the caps when it has them. */
  readonly worstCaseCostWei: bigint;
  /** The signature's validity (unix seconds), as it will be encoded in `paymasterAndData`. */
  readonly validUntil: number;
  readonly validAfter: number;
}

/** The JSON of the `operation` field: quantities as 0x hex (the JSON-RPC convention), the cost as decimal wei. */
export interface WebhookOperationJson {
  readonly mode: 'SPONSORED' | 'ERC20';
  /** v0.6's fields; from v0.7 also the paymaster's two gas limits, which the paymaster pays for too. */
  readonly userOperation: Record<Exclude<keyof WebhookUserOperation, PaymasterGasField | 'gasCaps'>, string> &
    Partial<Record<PaymasterGasField, string>>;
  /**
   * v0.7+, when the signature binds upper bounds of the three account gas values instead of the values (the client's
   * bundler sets them after Patron signs: docs/reference/json-rpc.md, "What is signed"): those bounds, as PatronPaymasterV07 names them.
   * Absent: the signature binds `userOperation`'s own values.
   */
  readonly gasCaps?: {
    readonly maxCallGasLimit: string;
    readonly maxVerificationGasLimit: string;
    readonly maxPreVerificationGas: string;
  };
  readonly entryPointVersion?: EntryPointVersion;
  readonly chainId: number;
  readonly entryPoint: Address;
  readonly paymaster: Address;
  readonly dappId: string;
  readonly policyIds: readonly string[];
  readonly worstCaseCostWei: string;
  readonly validUntil: number;
  readonly validAfter: number;
}

type PaymasterGasField = 'paymasterVerificationGasLimit' | 'paymasterPostOpGasLimit';

const quantity = (n: bigint): Hex => `0x${n.toString(16)}`;

/**
 * The one serializer of the operation (bigint inside, strings at the wire). Quantities are hex as a bundler's
 * eth_sendUserOperation takes them; the worst-case cost is a decimal string, the unit a dApp compares with
 * its own budgets (and exact beyond 2^53, unlike a JSON number).
 */
export function webhookOperationJson(op: WebhookOperation): WebhookOperationJson {
  const u = op.userOperation;
  return {
    mode: op.mode ?? 'SPONSORED',
    userOperation: {
      sender: u.sender,
      nonce: quantity(u.nonce),
      initCode: u.initCode,
      callData: u.callData,
      callGasLimit: quantity(u.callGasLimit),
      verificationGasLimit: quantity(u.verificationGasLimit),
      preVerificationGas: quantity(u.preVerificationGas),
      maxFeePerGas: quantity(u.maxFeePerGas),
      maxPriorityFeePerGas: quantity(u.maxPriorityFeePerGas),
      signature: u.signature,
      // v0.6's shape stays exactly as it was for receivers written before v0.7.
      ...(op.entryPointVersion === '0.6'
        ? {}
        : {
            paymasterVerificationGasLimit: quantity(u.paymasterVerificationGasLimit),
            paymasterPostOpGasLimit: quantity(u.paymasterPostOpGasLimit),
          }),
    },
    ...(u.gasCaps === undefined
      ? {}
      : {
          gasCaps: {
            maxCallGasLimit: quantity(u.gasCaps.callGasLimit),
            maxVerificationGasLimit: quantity(u.gasCaps.verificationGasLimit),
            maxPreVerificationGas: quantity(u.gasCaps.preVerificationGas),
          },
        }),
    ...(op.entryPointVersion === '0.6' ? {} : { entryPointVersion: op.entryPointVersion }),
    chainId: op.chainId,
    entryPoint: op.entryPoint,
    paymaster: op.paymaster,
    dappId: op.dappId,
    policyIds: [...op.policyIds],
    worstCaseCostWei: op.worstCaseCostWei.toString(),
    validUntil: op.validUntil,
    validAfter: op.validAfter,
  };
}
