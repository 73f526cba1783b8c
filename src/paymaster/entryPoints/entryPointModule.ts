import type { Address, Hex } from 'viem';
import type { ChainRuntime, EntryPointVersion } from '../../chain/chainRegistry.js';
import type { L1DataPricing } from '../l1DataGas.js';
import type { PartialUserOperation } from '../partialUserOperation.js';
import type { Keccak } from './abiWords.js';
import type { TokenPermit } from './paymasterModes.js';
import type { PenaltyGas } from './v07/unusedGasPenalty.js';

/**
 * What differs between EntryPoint versions, as one small table-like module per version that the paymaster
 * pipeline (sponsorshipService.ts, tokenPaymasterService.ts) selects by the chain deployment's version: the op's
 * packing and hashes, the paymaster data layout, the simulation, the prefund rule. The pipeline itself (verdict →
 * limits → window → hash → sign → encode) is written once.
 */

/** The account's gas limits (the caller's or simulated). */
export interface GasLimits {
  readonly callGasLimit: bigint;
  readonly verificationGasLimit: bigint;
  readonly preVerificationGas: bigint;
}

/** The paymaster's own two limits (v0.7+; zero on v0.6, where verificationGasLimit covers the paymaster too). */
export interface PaymasterGas {
  readonly paymasterVerificationGasLimit: bigint;
  readonly paymasterPostOpGasLimit: bigint;
}

/** The op as it is hashed, simulated and signed: every gas field final, `initCode` = factory ‖ factoryData. */
export interface FinalUserOperation extends GasLimits, PaymasterGas {
  readonly sender: Address;
  readonly nonce: bigint;
  readonly initCode: Hex;
  readonly callData: Hex;
  readonly maxFeePerGas: bigint;
  readonly maxPriorityFeePerGas: bigint;
  readonly signature: Hex;
  /**
   * An EIP-7702 sender (v0.8+): the delegate its code will run, which the signature binds, and whether the op
   * carries the authorization (its gas, which the EntryPoint cannot see, belongs in preVerificationGas).
   */
  readonly eip7702?: { readonly delegate: Address; readonly authorized: boolean } | undefined;
  /**
   * The sender's code hash, for an op without initCode (the sender is deployed, or its eip7702Auth installs the
   * delegation): PatronPaymasterV07 binds it in the digest, so code changed after signing fails the signature.
   */
  readonly senderCodeHash?: Hex | undefined;
  /**
   * v0.7+: upper bounds of the three account gas values that the signature binds instead of the values themselves,
   * for a client whose bundler estimates them after Patron signed (@biconomy/abstractjs through viem: one
   * pm_getPaymasterData, then the bundler's estimate). Absent: the op's own values are the bounds (exact binding).
   * The prefund, so the worst case, is computed at the bounds.
   */
  readonly gasCaps?: GasLimits | undefined;
}

/** The three account gas values of an op (or of anything carrying them), as a GasLimits of their own. */
export const gasLimitsOf = (op: GasLimits): GasLimits => ({
  callGasLimit: op.callGasLimit,
  verificationGasLimit: op.verificationGasLimit,
  preVerificationGas: op.preVerificationGas,
});

/** The token fields a stub carries (every version): values of the final encoding's length, never signed. */
export const STUB_TOKEN_FIELDS = { exchangeRate: 1n, priceMarkup: 1_000_000, maxTokenCost: 1n } as const;

/**
 * A stub's permit before the account has signed one: a value of non-zero bytes and a 65-byte signature (an ECDSA
 * owner's length), so the stub's calldata costs no less than most final data's; the final data carries the real one.
 */
export const STUB_PERMIT: TokenPermit = { value: (1n << 256n) / 255n, signature: `0x${'01'.repeat(65)}` };

/** The paymaster's gas limits differ by mode: sponsored, token (modes 1 and 2) and token with a permit (mode 3). */
export type PaymasterGasMode = 'SPONSORED' | 'ERC20' | 'ERC20_PERMIT';

/** The gas mode of what a signature authorises. */
export const paymasterGasModeOf = (auth: Authorization): PaymasterGasMode => {
  if (auth.mode === 'SPONSORED') return 'SPONSORED';
  return auth.permit === undefined ? 'ERC20' : 'ERC20_PERMIT';
};

/** The three account gas values the prefund is computed at: the caps when the op has them. */
export function boundedGas(op: FinalUserOperation): GasLimits & PaymasterGas {
  const caps = op.gasCaps ?? op;
  return {
    callGasLimit: caps.callGasLimit,
    verificationGasLimit: caps.verificationGasLimit,
    preVerificationGas: caps.preVerificationGas,
    paymasterVerificationGasLimit: op.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: op.paymasterPostOpGasLimit,
  };
}

/** What the paymaster contributes to the op, in both the v0.6 form and the v0.7+ unpacked form. */
export interface PaymasterFields extends PaymasterGas {
  /** v0.6: the field itself; v0.7+: paymaster ‖ uint128 ‖ uint128 ‖ paymasterData, as the EntryPoint packs it. */
  readonly paymasterAndData: Hex;
  readonly paymaster: Address;
  readonly paymasterData: Hex;
}

/** The signature's validity: unix seconds (or, on v0.9 when asked for, block numbers with the range flag). */
export interface ValidityWindow {
  readonly validUntil: number;
  readonly validAfter: number;
}

/** What a signature authorises: the paymaster pays, or the paymaster pays and charges the account in a token. */
export type Authorization =
  | { readonly mode: 'SPONSORED' }
  | {
      readonly mode: 'ERC20';
      readonly token: Address;
      /** Token base units per 1e18 wei. */
      readonly exchangeRate: bigint;
      /** Parts per million, 1e6 = no premium. */
      readonly priceMarkup: number;
      /** The most the op may be charged, in token base units. */
      readonly maxTokenCost: bigint;
      /**
       * Mode 2: the op batches its approval, so its charge may be collected in postOp and fail; signed only for an
       * op the dApp's sponsorship policy admits (docs/guides/token-mode.md, "Paying gas in ERC-20"). Absent: mode 1, prefunded.
       */
      readonly guaranteed?: boolean | undefined;
      /**
       * Mode 3: the account's EIP-2612 permit, executed in validation before the prefund (no guarantee: prefunded as
       * mode 1). docs/guides/token-mode.md, "First-time users: the permit".
       */
      readonly permit?: TokenPermit | undefined;
    };

export interface SignArgs {
  readonly chain: ChainRuntime;
  readonly op: FinalUserOperation;
  readonly window: ValidityWindow;
  readonly authorization: Authorization;
  readonly keccak: Keccak;
  /** EntryPoint v0.9 only: the signature in the `paymasterSignature` suffix, outside the userOpHash. */
  readonly signatureInSuffix?: boolean | undefined;
}

/**
 * A signature to make: the digest the paymaster signs, and the fields encoded around its signature. Split so that a
 * signer on a device (which answers later) and a local key (at once) share it: signFields.ts joins the two.
 */
export interface PaymasterSigning {
  /** The EIP-191 digest of the paymaster's hash of the op. */
  readonly digest: Uint8Array;
  /** The paymaster fields with this signature (r ‖ s ‖ v) in them. */
  fields(signature: Uint8Array): PaymasterFields;
}

export interface EstimateArgs {
  readonly chain: ChainRuntime;
  /** The op with its paymaster fields at the final length (a dummy signature): their bytes are part of its cost. */
  readonly op: FinalUserOperation;
  readonly fields: PaymasterFields;
  /** The caller's preVerificationGas, if any: the result is never lower. */
  readonly callerPreVerificationGas?: bigint | undefined;
  /**
   * Fields to simulate with, made from the simulated op (the token mode signs for real so its postOp runs); a Promise
   * when the signer is a device.
   */
  readonly simulationFields?:
    | ((simulated: FinalUserOperation) => PaymasterFields | Promise<PaymasterFields>)
    | undefined;
  /** A call made from the EntryPoint after the op, whose result is reported (e.g. a view of the paymaster). */
  readonly after?: { readonly target: Address; readonly callData: Hex } | undefined;
  /** Storage the simulation sees changed (eth_call state override `stateDiff`), e.g. for a charge probe. */
  readonly stateDiff?: StateDiff | undefined;
}

/** Storage slots to override in a simulation, per contract: address → slot → 32-byte value. */
export type StateDiff = Readonly<Record<Address, Readonly<Record<Hex, Hex>>>>;

/**
 * How a simulation shows that the token mode's charge was collected (the op executed and postOp's transfer went
 * through): what to call after the op, the state it needs, and how to read the answer.
 */
export interface ChargeProbe {
  readonly after: { readonly target: Address; readonly callData: Hex };
  readonly stateDiff?: StateDiff | undefined;
  collected(result: Hex): boolean;
}

export interface GasEstimate extends GasLimits {
  /** Gas the simulated op used in all (what the EntryPoint charged at 1 wei). */
  readonly gasUsed: bigint;
  readonly after?: { readonly success: boolean; readonly result: Hex };
}

export interface EntryPointModule {
  readonly version: EntryPointVersion;
  /**
   * v0.6: the paymaster's validation and postOp run within the op's verificationGasLimit (it has no limits of its
   * own), so the token mode sizes that limit for them; v0.7+: the paymaster's own limits cover them.
   */
  readonly paymasterInAccountGas: boolean;
  /** The paymaster's own gas limits for a mode (zero on v0.6). */
  paymasterGas(mode: PaymasterGasMode): PaymasterGas;
  /** The most the EntryPoint may charge the paymaster for an op with these limits (its prefund). */
  worstCaseCost(limits: GasLimits & PaymasterGas, maxFeePerGas: bigint): bigint;
  /**
   * The token mode: the wei amount the most an op may be charged is converted from, for an op within these limits
   * (the caps, when it has them) at maxFeePerGas: the most postOp can be given, plus what the charge adds to it.
   */
  maxChargeWei(limits: GasLimits & PaymasterGas, maxFeePerGas: bigint): bigint;
  /**
   * The op's preVerificationGas by its size with these fields (what its calldata costs, with the margin), plus on an
   * L2 the gas of its encoding's L1 data in handleOps, priced by `l1` (l1DataGas.ts; signing bounds).
   */
  preVerificationGas(args: { op: FinalUserOperation; fields: PaymasterFields; l1?: L1DataPricing | undefined }): bigint;
  /** The most unused-gas penalty an op within these limits can pay, in gas (unusedGasPenalty.ts); 0 on v0.6. */
  unusedGasPenalty(gas: PenaltyGas): bigint;
  /**
   * The largest callGasLimit whose most penalty stays within `penalty` with this postOp limit (-1: none does);
   * undefined on v0.6, which has no penalty.
   */
  maxCallGasLimitForPenalty(args: { penalty: bigint; paymasterPostOpGasLimit: bigint }): bigint | undefined;
  /**
   * ERC-7562 (v0.7+): compliant bundlers drop an op whose verificationGasLimit or paymasterVerificationGasLimit is
   * not below 500,000 (MAX_VERIFICATION_GAS), so Patron signs none above this; undefined on v0.6.
   */
  readonly maxVerificationGasLimit: bigint | undefined;
  /** The token mode's probe of a simulated charge (ChargeProbe). */
  chargeProbe(args: { chain: ChainRuntime; sender: Address; token: Address }): ChargeProbe;
  /** Paymaster fields of the final length with a dummy signature (ERC-7677 stubs, estimation). */
  stub(args: {
    chain: ChainRuntime;
    window: ValidityWindow;
    authorization: Authorization;
    /** As SignArgs: the stub then has the suffixed form's length. */
    signatureInSuffix?: boolean | undefined;
  }): PaymasterFields;
  /** Hash → EIP-191 digest, and the encoding around its signature (signFields.ts signs). */
  signing(args: SignArgs): PaymasterSigning;
  /** The EntryPoint's userOpHash of the op with these fields (the ledger's and settlement's key). */
  userOpHash(args: { chain: ChainRuntime; op: FinalUserOperation; fields: PaymasterFields; keccak: Keccak }): Hex;
  /**
   * How many simulations `estimate` runs (the rate limits count each: they bound the load on the node), with
   * real fields to simulate (`verified`, the token mode's final data) or not.
   */
  simulations(args: { readonly verified: boolean }): number;
  /** Gas limits by simulation (docs/reference/json-rpc.md, "Gas limits"). */
  estimate(args: EstimateArgs): Promise<GasEstimate>;
}

/** What Patron learnt of the op's sender from the chain (paymaster/senderFacts.ts), which the signature binds. */
export interface SenderFacts {
  readonly eip7702?: FinalUserOperation['eip7702'];
  readonly codeHash?: Hex | undefined;
}

/** The op of a request completed with limits (a missing one as 0) and the paymaster's own gas. */
export function finalUserOperation(
  op: PartialUserOperation,
  limits: { readonly [K in keyof GasLimits]?: bigint | undefined },
  paymasterGas: PaymasterGas,
  sender?: SenderFacts,
): FinalUserOperation {
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.initCode,
    callData: op.callData,
    callGasLimit: limits.callGasLimit ?? 0n,
    verificationGasLimit: limits.verificationGasLimit ?? 0n,
    preVerificationGas: limits.preVerificationGas ?? 0n,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    paymasterVerificationGasLimit: paymasterGas.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: paymasterGas.paymasterPostOpGasLimit,
    signature: op.signature,
    eip7702: sender?.eip7702,
    senderCodeHash: sender?.codeHash,
  };
}
