import { type Address, type Hex, hexToBytes, slice } from 'viem';
import type { EntryPointV07Version } from '../../chain/entryPoints.js';
import { estimateGasV07 } from '../gasEstimatorV07.js';
import { eip191Digest, MODE_SPONSORED, MODE_TOKEN } from '../patronPaymasterV06.js';
import {
  DUMMY_PAYMASTER_SIGNATURE,
  encodePaymasterAndDataV07,
  type GasCapsV07,
  type PaymasterFieldsV07,
  sponsoredHashV07,
  tokenHashV07,
  userOpHashForVersion,
  worstCaseCostV07,
} from '../patronPaymasterV07.js';
import type { UnpackedUserOperationV07 } from '../userOperationV07.js';
import type {
  Authorization,
  EntryPointModule,
  FinalUserOperation,
  GasLimits,
  PaymasterFields,
  PaymasterGas,
  ValidityWindow,
} from './entryPointModule.js';

/**
 * EntryPoint v0.7, v0.8 and v0.9 with contracts/PatronPaymasterV07.sol (patronPaymasterV07.ts has the layouts and
 * hashes): the paymaster has gas limits of its own, the prefund is the sum of every limit, and from v0.8 the
 * signature binds an EIP-7702 sender's delegate. One module per version, built from one definition: they differ
 * only in the userOpHash (v0.7 plain, v0.8 EIP-712, v0.9 with the signature suffix left out) and the penalty rule,
 * which the codec and the estimator take by version.
 *
 * The paymaster's own limits, from the contract tests' measurements (contracts/README.md) with margin: sponsored
 * validation uses ~21.6k gas and has no postOp; token validation up to ~52k (an approval batched into a new
 * account), its postOp ~36k. A postOp limit that leaves under 40,000 gas unused is never penalised on v0.8+.
 */
const PAYMASTER_GAS: Record<Authorization['mode'], PaymasterGas> = {
  SPONSORED: { paymasterVerificationGasLimit: 40_000n, paymasterPostOpGasLimit: 0n },
  ERC20: { paymasterVerificationGasLimit: 75_000n, paymasterPostOpGasLimit: 50_000n },
};

/** The token fields a stub carries: values of the final encoding's length, never signed. */
const STUB_TOKEN = { exchangeRate: 1n, priceMarkup: 1_000_000, maxTokenCost: 1n } as const;

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
  const { token, exchangeRate, priceMarkup, maxTokenCost } = auth;
  return { mode: MODE_TOKEN, token, exchangeRate, priceMarkup, maxTokenCost };
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

/** initCode as viem's unpacked op splits it: the factory (or the 0x7702 marker) and its data. */
function unpacked(op: FinalUserOperation, f: PaymasterFields): UnpackedUserOperationV07 {
  const init = op.initCode;
  const factoryEnd = Math.min(hexToBytes(init).length, 20);
  return {
    sender: op.sender,
    nonce: op.nonce,
    ...(init === '0x' ? {} : { factory: slice(init, 0, factoryEnd), factoryData: slice(init, factoryEnd) }),
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
    signature: op.signature,
    ...(op.eip7702?.authorized === true ? { eip7702Auth: { address: op.eip7702.delegate } } : {}),
  };
}

function entryPointV07Module(version: EntryPointV07Version): EntryPointModule {
  return {
    version,
    paymasterGas: (mode) => PAYMASTER_GAS[mode],
    worstCaseCost: (gas, maxFeePerGas) => worstCaseCostV07({ ...gas, ...capsOf(gas) }, maxFeePerGas),
    stub: ({ chain, window, authorization, signatureInSuffix }) => {
      const auth = authorization.mode === 'SPONSORED' ? authorization : { ...authorization, ...STUB_TOKEN };
      const op = PAYMASTER_GAS[authorization.mode];
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
    sign: ({ chain, op, window, authorization, sign, keccak, signatureInSuffix }) => {
      const caps = capsOf(op);
      const params = {
        userOp: op,
        caps,
        chainId: BigInt(chain.chainId),
        paymaster: chain.paymaster,
        entryPoint: chain.entryPoint,
        ...window,
        ...(op.eip7702 === undefined ? {} : { eip7702Delegate: op.eip7702.delegate }),
      };
      const hash =
        authorization.mode === 'SPONSORED'
          ? sponsoredHashV07(params, keccak)
          : tokenHashV07({ ...params, ...authorization }, keccak);
      const signature = sign(eip191Digest(hash, keccak));
      return encode({
        paymaster: chain.paymaster,
        op,
        caps,
        window,
        auth: authorization,
        signature,
        signatureInSuffix,
      });
    },
    userOpHash: ({ chain, op, fields: f, keccak }) =>
      userOpHashForVersion(
        {
          userOp: { ...op, paymasterAndData: f.paymasterAndData },
          entryPoint: chain.entryPoint,
          chainId: chain.chainId,
          version,
          ...(op.eip7702 === undefined ? {} : { eip7702Delegate: op.eip7702.delegate }),
        },
        keccak,
      ),
    estimate: ({ chain, op, fields: f, callerPreVerificationGas, simulationFields, after }) =>
      estimateGasV07({
        request: chain.request,
        entryPoint: chain.entryPoint,
        version,
        userOp: unpacked(op, f),
        callerPreVerificationGas,
        ...(simulationFields === undefined
          ? {}
          : {
              simulationPaymasterData: (simulated) =>
                simulationFields({
                  ...op,
                  callGasLimit: simulated.callGasLimit,
                  verificationGasLimit: simulated.verificationGasLimit,
                  preVerificationGas: simulated.preVerificationGas,
                  maxFeePerGas: simulated.maxFeePerGas,
                  maxPriorityFeePerGas: simulated.maxPriorityFeePerGas,
                  signature: simulated.signature,
                }).paymasterData,
            }),
        after,
      }),
  };
}

export const entryPointV07 = entryPointV07Module('0.7');
export const entryPointV08 = entryPointV07Module('0.8');
export const entryPointV09 = entryPointV07Module('0.9');
