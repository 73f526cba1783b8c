import { randomBytes } from 'node:crypto';
import { type Address, bytesToHex, decodeFunctionResult, encodeFunctionData, erc20Abi, type Hex, pad } from 'viem';
import type { EntryPointV07Version } from '../../../chain/entryPoints.js';
import { l1DataGas } from '../../l1DataGas.js';
import { eip191Digest } from '../abiWords.js';
import {
  type Authorization,
  type EntryPointModule,
  type FinalUserOperation,
  type GasLimits,
  type PaymasterFields,
  type PaymasterGas,
  type PaymasterGasMode,
  paymasterGasModeOf,
  STUB_TOKEN_FIELDS,
  type ValidityWindow,
} from '../entryPointModule.js';
import { MODE_SPONSORED, MODE_TOKEN } from '../paymasterModes.js';
import { DUMMY_SIGNATURE } from '../v06/gasEstimatorV06.js';
import { maxPenaltyGas, POST_OP_OVERHEAD_V07, worstCaseCostV07 } from './chargesV07.js';
import { estimateGasV07 } from './gasEstimatorV07.js';
import { sponsoredHashV07, tokenHashV07, userOpHashForVersion } from './hashesV07.js';
import {
  DUMMY_PAYMASTER_SIGNATURE,
  encodePaymasterAndDataV07,
  type GasCapsV07,
  type PaymasterFieldsV07,
} from './patronPaymasterV07.js';
import { packedCount, preVerificationGasV07 } from './preVerificationGasV07.js';
import { simulateHandleOpV07 } from './simulateV07.js';
import { maxCallGasLimitForPenalty, maxUnusedGasPenalty } from './unusedGasPenalty.js';
import type { UnpackedUserOperationV07 } from './userOperationV07.js';

/**
 * EntryPoint v0.7, v0.8 and v0.9 with contracts/PatronPaymasterV07.sol (patronPaymasterV07.ts has the layouts and
 * hashes): the paymaster has gas limits of its own, the prefund is the sum of every limit, and from v0.8 the
 * signature binds an EIP-7702 sender's delegate. One module per version, built from one definition: they differ
 * only in the userOpHash (v0.7 plain, v0.8 EIP-712, v0.9 with the signature suffix left out) and the penalty rule,
 * which the codec and the estimator take by version.
 *
 * The paymaster's own limits, from the contract tests' measurements (contracts/README.md) with margin: sponsored
 * validation uses ~23k gas and has no postOp; token validation up to ~62k (mode 1: the prefund's transferFrom
 * into a paymaster holding none of the token; mode 2 with an approval batched into a new account ~55k), its postOp
 * ~36k (either mode, to an empty fee receiver). A postOp limit that leaves under 40,000 gas unused is never
 * penalised on v0.8+.
 */
const PAYMASTER_GAS: Record<PaymasterGasMode, PaymasterGas> = {
  SPONSORED: { paymasterVerificationGasLimit: 40_000n, paymasterPostOpGasLimit: 0n },
  ERC20: { paymasterVerificationGasLimit: 90_000n, paymasterPostOpGasLimit: 50_000n },
  // Mode 3: the permit (its nonce and the allowance written from zero, the ERC-1271 call into the account) before
  // mode 1's prefund: 129,417 measured for an undeployed Safe 1.4.1, 118,924 for an EIP-7702 Simple7702Account
  // (test/contract.patronPaymasterV07.permit.test.ts); ~70k of margin for heavier tokens and ERC-1271 checks. PostOp
  // is mode 1's.
  ERC20_PERMIT: { paymasterVerificationGasLimit: 200_000n, paymasterPostOpGasLimit: 50_000n },
};

/**
 * ERC-7562's MAX_VERIFICATION_GAS: a compliant bundler drops an op whose verificationGasLimit or
 * paymasterVerificationGasLimit is not below it (the paymaster's own limits here are far below).
 */
const ERC7562_MAX_VERIFICATION_GAS = 500_000n;

/**
 * A stub's caps: non-zero bytes throughout, so the stub's calldata never costs less than the final data's and the
 * preVerificationGas estimated on it stays valid (zero bytes cost 4 gas, others 16).
 */
const STUB_CAPS: GasCapsV07 = {
  maxVerificationGasLimit: 0x0101_0101_0101_0101n,
  maxCallGasLimit: 0x0101_0101_0101_0101n,
  maxPreVerificationGas: 0x0101_0101_0101_0101n,
};

/** The caps the signature binds: the op's own (exact) or the bounds the pipeline chose (FinalUserOperation). */
const capsOf = (op: GasLimits & { readonly gasCaps?: GasLimits | undefined }): GasCapsV07 => {
  const c = op.gasCaps ?? op;
  return {
    maxVerificationGasLimit: c.verificationGasLimit,
    maxCallGasLimit: c.callGasLimit,
    maxPreVerificationGas: c.preVerificationGas,
  };
};

function codecFields(auth: Authorization): PaymasterFieldsV07 {
  if (auth.mode === 'SPONSORED') return { mode: MODE_SPONSORED };
  const { token, exchangeRate, priceMarkup, maxTokenCost, guaranteed, permit } = auth;
  return { mode: MODE_TOKEN, token, exchangeRate, priceMarkup, maxTokenCost, guaranteed, permit };
}

/** The fields as both forms: the packed paymasterAndData and ERC-7677's paymasterData (after the 52 bytes). */
function fields(paymaster: Address, gas: PaymasterGas, paymasterAndData: Hex): PaymasterFields {
  return { ...gas, paymaster, paymasterAndData, paymasterData: `0x${paymasterAndData.slice(2 + 52 * 2)}` };
}

function encode(args: {
  paymaster: Address;
  op: PaymasterGas;
  caps: GasCapsV07;
  window: ValidityWindow;
  auth: Authorization;
  signature: Uint8Array;
  signatureInSuffix?: boolean | undefined;
}): PaymasterFields {
  const gas = {
    paymasterVerificationGasLimit: args.op.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: args.op.paymasterPostOpGasLimit,
  };
  const paymasterAndData = encodePaymasterAndDataV07({
    paymaster: args.paymaster,
    ...gas,
    fields: codecFields(args.auth),
    caps: args.caps,
    ...args.window,
    signature: args.signature,
    signatureInSuffix: args.signatureInSuffix === true,
  });
  return fields(args.paymaster, gas, paymasterAndData);
}

/**
 * PatronPaymasterV07's `feeReceiver` storage slot: Ownable's owner (0) and Ownable2Step's pending owner (1) come
 * first, then feeReceiver (2) and the signer set (3, 4). A test reads it from the deployed contract.
 */
export const FEE_RECEIVER_SLOT: Hex = pad('0x02', { size: 32 });

/** The gas values the token mode's maximum charge is computed at (its caps, when the op has them). */
const chargeBounds = (limits: GasLimits & PaymasterGas & { readonly gasCaps?: GasLimits | undefined }) => ({
  ...capsOf(limits),
  paymasterVerificationGasLimit: limits.paymasterVerificationGasLimit,
  paymasterPostOpGasLimit: limits.paymasterPostOpGasLimit,
});

/** initCode as viem's unpacked op splits it: the factory (or the 0x7702 marker) and its data. */
function unpacked(op: FinalUserOperation, f: PaymasterFields, signature: Hex = op.signature): UnpackedUserOperationV07 {
  const init = op.initCode;
  // The factory is the first 20 bytes, or the whole initCode when shorter (the unpadded 0x7702 marker, no data).
  const factoryEnd = 2 + 2 * Math.min((init.length - 2) >>> 1, 20);
  return {
    sender: op.sender,
    nonce: op.nonce,
    ...(init === '0x'
      ? {}
      : { factory: init.slice(0, factoryEnd) as Hex, factoryData: `0x${init.slice(factoryEnd)}` as Hex }),
    callData: op.callData,
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    paymaster: f.paymaster,
    paymasterVerificationGasLimit: f.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: f.paymasterPostOpGasLimit,
    paymasterData: f.paymasterData,
    signature,
    ...(op.eip7702?.authorized === true ? { eip7702Auth: { address: op.eip7702.delegate } } : {}),
  };
}

function entryPointV07Module(version: EntryPointV07Version): EntryPointModule {
  /** What this version's userOpHash covers: the op with its packed paymaster fields. */
  const hashInput = (
    chain: { readonly chainId: number; readonly entryPoint: Address },
    op: FinalUserOperation,
    f: PaymasterFields,
  ) => ({
    userOp: { ...op, paymasterAndData: f.paymasterAndData },
    entryPoint: chain.entryPoint,
    chainId: chain.chainId,
    version,
    ...(op.eip7702 === undefined ? {} : { eip7702Delegate: op.eip7702.delegate }),
  });
  return {
    version,
    paymasterInAccountGas: false,
    paymasterGas: (mode) => PAYMASTER_GAS[mode],
    // Three side by side (gasEstimatorV07), and one more with the real fields at the limits found.
    simulations: ({ verified }) => (verified ? 4 : 3),
    worstCaseCost: (gas, maxFeePerGas) => worstCaseCostV07({ ...gas, ...capsOf(gas) }, maxFeePerGas),
    // The contract's charge: what postOp is given (at most the prefund) plus POST_OP_OVERHEAD and its penalty bound.
    maxChargeWei: (limits, maxFeePerGas) => {
      const gas = chargeBounds(limits);
      const penalty = maxPenaltyGas({
        callGasLimit: gas.maxCallGasLimit,
        paymasterPostOpGasLimit: gas.paymasterPostOpGasLimit,
        version,
      });
      return worstCaseCostV07(gas, maxFeePerGas) + (POST_OP_OVERHEAD_V07 + penalty) * maxFeePerGas;
    },
    preVerificationGas: ({ op, fields: f, l1 }) => {
      const sized = unpacked(op, f, op.signature === '0x' ? DUMMY_SIGNATURE : op.signature);
      const eip7702 = sized.eip7702Auth !== undefined;
      const l1Gas = l1 === undefined ? 0n : l1DataGas(l1, { bytes: packedCount(sized, 'max').bytes, eip7702 });
      return preVerificationGasV07(sized) + l1Gas;
    },
    unusedGasPenalty: (gas) => maxUnusedGasPenalty(version, gas),
    maxCallGasLimitForPenalty: (args) => maxCallGasLimitForPenalty(version, args),
    maxVerificationGasLimit: ERC7562_MAX_VERIFICATION_GAS - 1n,
    // v0.7+ keeps no record of a failed charge (the EntryPoint reverts the op's execution instead). The probe
    // points the paymaster's feeReceiver at a fresh random address for the simulation: that address holds any
    // of the token only if postOp's transfer went through (an unpredictable address, so no one can pre-fund it).
    chargeProbe: ({ chain, token }) => {
      const receiver = bytesToHex(randomBytes(20));
      return {
        after: {
          target: token,
          callData: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [receiver] }),
        },
        stateDiff: { [chain.paymaster]: { [FEE_RECEIVER_SLOT]: pad(receiver, { size: 32 }) } },
        collected: (result) => decodeFunctionResult({ abi: erc20Abi, functionName: 'balanceOf', data: result }) > 0n,
      };
    },
    stub: ({ chain, window, authorization, signatureInSuffix }) => {
      const auth = authorization.mode === 'SPONSORED' ? authorization : { ...authorization, ...STUB_TOKEN_FIELDS };
      const op = PAYMASTER_GAS[paymasterGasModeOf(authorization)];
      return encode({
        paymaster: chain.paymaster,
        op,
        caps: STUB_CAPS,
        window,
        auth,
        signature: DUMMY_PAYMASTER_SIGNATURE,
        signatureInSuffix,
      });
    },
    signing: ({ chain, op, window, authorization, keccak, signatureInSuffix }) => {
      const caps = capsOf(op);
      const params = {
        userOp: op,
        caps,
        chainId: BigInt(chain.chainId),
        paymaster: chain.paymaster,
        entryPoint: chain.entryPoint,
        ...window,
        ...(op.eip7702 === undefined ? {} : { eip7702Delegate: op.eip7702.delegate }),
        ...(op.senderCodeHash === undefined ? {} : { senderCodeHash: op.senderCodeHash }),
      };
      const hash =
        authorization.mode === 'SPONSORED'
          ? sponsoredHashV07(params, keccak)
          : tokenHashV07({ ...params, ...authorization }, keccak);
      return {
        digest: eip191Digest(hash, keccak),
        fields: (signature) =>
          encode({ paymaster: chain.paymaster, op, caps, window, auth: authorization, signature, signatureInSuffix }),
      };
    },
    userOpHash: ({ chain, op, fields: f, keccak }) => userOpHashForVersion(hashInput(chain, op, f), keccak),
    /**
     * Limits from three simulations with the stub's fields (gasEstimatorV07), then, when the caller gives real
     * fields to simulate with (the token mode signs them so its validation and postOp run), one more at those
     * limits: that one reports the `after` call and what the op is charged (its `paid` at 1 wei, penalty
     * included). The stub's fields never reach postOp (a dummy signature fails validation softly first), so they
     * measure the account alone; the paymaster's own limits cover the rest.
     */
    estimate: async ({ chain, op, fields: f, callerPreVerificationGas, simulationFields, after, stateDiff }) => {
      const limits = await estimateGasV07({
        request: chain.request,
        entryPoint: chain.entryPoint,
        version,
        userOp: unpacked(op, f),
        callerPreVerificationGas,
        ...(simulationFields === undefined ? { after } : {}),
      });
      if (simulationFields === undefined) return limits;
      const simulated: FinalUserOperation = {
        ...op,
        callGasLimit: limits.callGasLimit,
        verificationGasLimit: limits.verificationGasLimit,
        preVerificationGas: limits.preVerificationGas,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
        signature: op.signature === '0x' ? DUMMY_SIGNATURE : op.signature,
      };
      const real = await simulationFields(simulated);
      const result = await simulateHandleOpV07({
        request: chain.request,
        entryPoint: chain.entryPoint,
        version,
        userOp: unpacked(simulated, real),
        ...(after === undefined ? {} : { target: after.target, targetCallData: after.callData }),
        // The account's signature is a dummy; the paymaster's is real and its window checked.
        ignoreSignatureFailure: true,
        stateDiff,
      });
      return {
        callGasLimit: limits.callGasLimit,
        verificationGasLimit: limits.verificationGasLimit,
        preVerificationGas: limits.preVerificationGas,
        gasUsed: result.paid,
        ...(after === undefined ? {} : { after: { success: result.targetSuccess, result: result.targetResult } }),
      };
    },
  };
}

export const entryPointV07 = entryPointV07Module('0.7');
export const entryPointV08 = entryPointV07Module('0.8');
export const entryPointV09 = entryPointV07Module('0.9');
