import { type Address, decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import { patronPaymasterAbi } from '../../../chain/artifacts.js';
import { l1DataGas } from '../../l1DataGas.js';
import { eip191Digest } from '../abiWords.js';
import {
  type Authorization,
  type EntryPointModule,
  type FinalUserOperation,
  type PaymasterFields,
  type PaymasterGas,
  STUB_TOKEN_FIELDS,
  type ValidityWindow,
} from '../entryPointModule.js';
import { maxGasV06 } from '../tokenMath.js';
import {
  calldataCountV06,
  DUMMY_SIGNATURE,
  DUMMY_SIGNATURE_BYTES,
  estimateGasV06,
  preVerificationGasV06,
} from './gasEstimatorV06.js';
import {
  encodeSponsoredPaymasterAndData,
  encodeTokenPaymasterAndData,
  sponsoredHashV06,
  tokenHashV06,
  type UserOperationV06,
  userOpHashV06,
} from './patronPaymasterV06.js';
import { worstCaseCostV06 } from './prefundV06.js';

/**
 * EntryPoint v0.6 and contracts/PatronPaymaster.sol (patronPaymasterV06.ts has the layouts and hashes): one
 * `paymasterAndData`, no paymaster gas limits of its own (the op's verificationGasLimit covers validation and
 * postOp), and a prefund of callGasLimit + 3 × verificationGasLimit + preVerificationGas.
 */
const NO_PAYMASTER_GAS: PaymasterGas = { paymasterVerificationGasLimit: 0n, paymasterPostOpGasLimit: 0n };

function fields(paymaster: Address, paymasterAndData: Hex): PaymasterFields {
  return { ...NO_PAYMASTER_GAS, paymasterAndData, paymaster, paymasterData: `0x${paymasterAndData.slice(42)}` };
}

function encode(paymaster: Address, window: ValidityWindow, auth: Authorization, signature: Uint8Array): Hex {
  return auth.mode === 'SPONSORED'
    ? encodeSponsoredPaymasterAndData({ paymaster, ...window, signature })
    : encodeTokenPaymasterAndData({ paymaster, ...window, ...auth, signature });
}

/** The op as EntryPoint v0.6 takes it (with another signature when given). */
function v06(op: FinalUserOperation, paymasterAndData: Hex, signature: Hex = op.signature): UserOperationV06 {
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.initCode,
    callData: op.callData,
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    paymasterAndData,
    signature,
  };
}

/** What v0.6's userOpHash covers: the op as the EntryPoint takes it. */
const hashInput = (
  chain: { readonly chainId: number; readonly entryPoint: Address },
  op: FinalUserOperation,
  paymasterAndData: Hex,
) => ({
  version: '0.6' as const,
  userOp: v06(op, paymasterAndData),
  entryPoint: chain.entryPoint,
  chainId: chain.chainId,
});

export const entryPointV06: EntryPointModule = {
  version: '0.6',
  paymasterInAccountGas: true,
  paymasterGas: () => NO_PAYMASTER_GAS,
  // One simulateHandleOp, with the real fields when given.
  simulations: () => 1,
  worstCaseCost: worstCaseCostV06,
  maxChargeWei: (limits, maxFeePerGas) => maxGasV06(limits) * maxFeePerGas,
  preVerificationGas: ({ op, fields: f, l1 }) => {
    const sized = v06(op, f.paymasterAndData, op.signature === '0x' ? DUMMY_SIGNATURE : op.signature);
    const l1Gas = l1 === undefined ? 0n : l1DataGas(l1, { bytes: calldataCountV06(sized).bytes, eip7702: false });
    return preVerificationGasV06(sized) + l1Gas;
  },
  unusedGasPenalty: () => 0n,
  maxCallGasLimitForPenalty: () => undefined,
  maxVerificationGasLimit: undefined,
  // PatronPaymaster v0.6 records a charge its postOp could not collect (the EntryPoint calls postOp again after
  // a revert): nothing owed after the op means it was paid.
  chargeProbe: ({ chain, sender, token }) => ({
    after: {
      target: chain.paymaster,
      callData: encodeFunctionData({ abi: patronPaymasterAbi, functionName: 'unpaidCharges', args: [sender, token] }),
    },
    collected: (result) =>
      decodeFunctionResult({ abi: patronPaymasterAbi, functionName: 'unpaidCharges', data: result }) === 0n,
  }),
  stub: ({ chain, window, authorization }) => {
    const auth = authorization.mode === 'SPONSORED' ? authorization : { ...authorization, ...STUB_TOKEN_FIELDS };
    return fields(chain.paymaster, encode(chain.paymaster, window, auth, DUMMY_SIGNATURE_BYTES));
  },
  signing: ({ chain, op, window, authorization, keccak }) => {
    const params = { userOp: op, chainId: BigInt(chain.chainId), paymaster: chain.paymaster, ...window };
    const hash =
      authorization.mode === 'SPONSORED'
        ? sponsoredHashV06(params, keccak)
        : tokenHashV06({ ...params, ...authorization }, keccak);
    return {
      digest: eip191Digest(hash, keccak),
      fields: (signature) => fields(chain.paymaster, encode(chain.paymaster, window, authorization, signature)),
    };
  },
  userOpHash: ({ chain, op, fields: f, keccak }) => userOpHashV06(hashInput(chain, op, f.paymasterAndData), keccak),
  estimate: ({ chain, op, fields: f, callerPreVerificationGas, simulationFields, after, stateDiff }) =>
    estimateGasV06({
      chain,
      stateDiff,
      userOp: v06(op, f.paymasterAndData),
      ...(callerPreVerificationGas === undefined ? {} : { callerPreVerificationGas }),
      ...(simulationFields === undefined
        ? {}
        : {
            simulationPaymasterAndData: async (simulated) =>
              (await simulationFields({ ...simulated, ...NO_PAYMASTER_GAS })).paymasterAndData,
          }),
      ...(after === undefined ? {} : { after }),
    }),
};
