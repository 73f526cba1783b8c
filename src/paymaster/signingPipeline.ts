import type { Address, Hex } from 'viem';
import type { ChainRuntime } from '../chain/chainRegistry.js';
import type { ChainFees } from '../chain/feeOracle.js';
import { opKey, opKeyWith } from '../chain/opKey.js';
import type { SigningBounds } from '../config/boundsSettings.js';
import { OperationFieldError, ValidationError } from '../errors/PatronError.js';
import type { PolicyDecision } from '../policies/policyGate.js';
import { type Keccak, memoKeccak } from './entryPoints/abiWords.js';
import {
  type Authorization,
  type EntryPointModule,
  type FinalUserOperation,
  finalUserOperation,
  type GasLimits,
  type PaymasterFields,
  type PaymasterGas,
  type SenderFacts,
  type ValidityWindow,
} from './entryPoints/entryPointModule.js';
import type { SignDigest } from './entryPoints/signFields.js';
import { unsuffixedPrefix } from './entryPoints/v07/patronPaymasterV07.js';
import { type OpGasBounds, opGasBounds, preVerificationGasNeeded } from './gasBounds.js';
import { l1DataPricing } from './l1DataGas.js';
import type { PartialUserOperation } from './partialUserOperation.js';
import { type IssuedSignature, issuedSignature, type ReportFact, signatureFingerprint } from './requestFacts.js';
import { chainWindowOf } from './validityWindows.js';

/**
 * What the sponsored and the token mode do alike around a signature, written once, so that each mode writes only
 * what is its own:
 * - the gas rule: the caller's limits, or Patron's estimate (`callerLimits`, one rule, one message);
 * - the op's gas bounds on its EntryPoint version (`gasBoundsOf`);
 * - the signing tail (`issueSignature`): sign (awaited only from a device: signFields.ts) → (a finalize's prefix held) → the issued signature keyed by its
 *   userOpHash, or by its op key when it binds caps → its reservation, if the mode reserves → the instance's claim on
 *   the deposit, where instances share it → the solvency guard's record → the request's facts.
 */

/**
 * The caller's limits when they are to be used as they are (all three given, and `calculateGasLimits` not true), or
 * undefined when Patron estimates them. `calculateGasLimits: false` with a limit left out is refused, naming the first
 * one missing (docs/reference/json-rpc.md, "Gas limits").
 */
export function callerLimits(op: PartialUserOperation, calculateGasLimits: boolean | undefined): GasLimits | undefined {
  const missing =
    op.callGasLimit === undefined
      ? 'callGasLimit'
      : op.verificationGasLimit === undefined
        ? 'verificationGasLimit'
        : op.preVerificationGas === undefined
          ? 'preVerificationGas'
          : undefined;
  if (calculateGasLimits === false && missing !== undefined) {
    throw new OperationFieldError(missing, 'required when calculateGasLimits is false');
  }
  if (calculateGasLimits === true || missing !== undefined) return undefined;
  return {
    callGasLimit: op.callGasLimit ?? 0n,
    verificationGasLimit: op.verificationGasLimit ?? 0n,
    preVerificationGas: op.preVerificationGas ?? 0n,
  };
}

/**
 * The op's gas bounds (gasBounds.ts), its preVerificationGas sized with these final-length paymaster fields and, on an
 * L2, its L1 data priced from the chain's fees the request read (l1DataGas.ts: no read of its own).
 */
export function gasBoundsOf(args: {
  readonly ep: EntryPointModule;
  readonly op: PartialUserOperation;
  readonly paymasterGas: PaymasterGas;
  readonly sender: SenderFacts | undefined;
  readonly fields: PaymasterFields;
  readonly bounds: SigningBounds;
  readonly fees: ChainFees;
  /** Gas the op will grow by before it is signed (a token quote's approval the client batches afterwards). */
  readonly extraPreVerificationGas?: bigint;
}): OpGasBounds {
  const { ep, op, paymasterGas, bounds } = args;
  const sized = finalUserOperation(op, op, paymasterGas, args.sender);
  const l1 = l1DataPricing({ bounds, fees: args.fees, op });
  return opGasBounds({
    ep,
    bounds,
    preVerificationGasNeeded:
      preVerificationGasNeeded({ ep, op: sized, fields: args.fields, l1 }) + (args.extraPreVerificationGas ?? 0n),
    paymasterPostOpGasLimit: paymasterGas.paymasterPostOpGasLimit,
  });
}

export interface IssueArgs {
  readonly chain: ChainRuntime;
  readonly ep: EntryPointModule;
  /** The op as it is signed (its caps, when it has them). */
  readonly op: FinalUserOperation;
  /** The signed window, and the unix second by which it has surely closed (the request log's expiry). */
  readonly window: ValidityWindow;
  readonly expiresAt: number;
  readonly authorization: Authorization;
  readonly signatureInSuffix?: boolean | undefined;
  /** What the EntryPoint may charge the paymaster for the op at most. */
  readonly worstCaseWei: bigint;
  /** A parallel-signing finalize's committed prefix: the signed data must reproduce it byte for byte. */
  readonly prefix?: Hex | undefined;
  /** The mode's reservation of the signature, if it reserves (after signing: the userOpHash covers the data). */
  readonly reserve?: ((issued: IssuedSignature) => Promise<PolicyDecision>) | undefined;
  readonly report?: ReportFact | undefined;
}

export interface SigningTailDeps {
  readonly sign: SignDigest;
  readonly keccak: Keccak;
  /** The solvency guard's check and record of a signature being issued, in one synchronous step. */
  readonly admitSignature: (op: IssuedSignature) => void;
  /** Where instances share the deposit: this instance's claim made to cover the op first (solvencyGuard.ts). */
  readonly ensureHeadroom?: ((op: IssuedSignature) => Promise<void>) | undefined;
}

/** The signing tail both modes end with (see the file's comment); returns the signed paymaster fields. */
export async function issueSignature(deps: SigningTailDeps, args: IssueArgs): Promise<PaymasterFields> {
  const { chain, ep, op, window } = args;
  // The signature's own hasher: its userOpHash, later, reuses the hashes of the op's bytes the signing made.
  const keccak = memoKeccak(deps.keccak);
  const signing = ep.signing({
    chain,
    op,
    window,
    authorization: args.authorization,
    keccak,
    signatureInSuffix: args.signatureInSuffix,
  });
  const signedDigest = deps.sign(signing.digest);
  // A device's signature is awaited; a local key's is already there (no microtask on the hot path).
  const signature = signedDigest instanceof Uint8Array ? signedDigest : await signedDigest;
  const fields = signing.fields(signature);
  // A finalize reproduces its commit's prefix by construction (every field was checked); this holds it to that.
  if (args.prefix !== undefined && unsuffixedPrefix(fields.paymasterAndData) !== args.prefix.toLowerCase()) {
    throw new ValidationError('the committed paymasterData does not match the op as Patron would sign it');
  }
  const issued = issuedSignature({
    chain,
    worstCaseWei: args.worstCaseWei,
    // Unix seconds, also for a block window (its expiresAt): the request log's expiry.
    validUntil: args.expiresAt,
    window: chainWindowOf(window),
    sender: op.sender,
    nonce: op.nonce,
    hash: () => signatureKey({ chain, ep, op, fields, keccak }),
    opKey: () =>
      opKeyWith(keccak.keccak256, {
        chainId: chain.chainId,
        entryPoint: chain.entryPoint,
        sender: op.sender,
        nonce: op.nonce,
      }),
    signature: signatureFingerprint(signature),
  });
  // A denial of the reservation discards the signature unseen.
  const decision = args.reserve === undefined ? undefined : await args.reserve(issued);
  // Where instances share the deposit, this one's claim is made to cover the op, right before the guard's check.
  if (deps.ensureHeadroom !== undefined) await deps.ensureHeadroom(issued);
  // After the last await: the guard's check and its record of this signature are one step.
  deps.admitSignature(issued);
  if (args.report !== undefined) {
    if (decision !== undefined) args.report({ kind: 'policy', decision });
    args.report({
      kind: 'signed',
      mode: args.authorization.mode,
      paymasterAndData: fields.paymasterAndData,
      ...issued,
    });
  }
  return fields;
}

/**
 * What a signature is known by: the EntryPoint's userOpHash of the op as signed, or, when it binds caps (the bundler
 * sets the final gas, and the userOpHash with it), the op key (chain/opKey.ts) an EntryPoint includes once.
 */
function signatureKey(args: {
  readonly chain: ChainRuntime;
  readonly ep: EntryPointModule;
  readonly op: FinalUserOperation;
  readonly fields: PaymasterFields;
  readonly keccak: Keccak;
}): Hex {
  const { chain, op } = args;
  if (op.gasCaps === undefined) return args.ep.userOpHash(args);
  const sender: Address = op.sender;
  return opKey({ chainId: chain.chainId, entryPoint: chain.entryPoint, sender, nonce: op.nonce });
}
