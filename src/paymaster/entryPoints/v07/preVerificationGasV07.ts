import {
  bytesField,
  type CalldataCount,
  calldataCost,
  dynamicFields,
  hexNonZero,
  hexSize,
  onesField,
  uintNonZero,
} from '../calldataCount.js';
import type { UnpackedUserOperationV07 } from './userOperationV07.js';

/** executeUserOp's selector: alto prices such a call by the words of the whole op. */
const EXECUTE_USER_OP_SELECTOR = '0x8dd7712f';

/**
 * preVerificationGas for a v0.7-v0.9 op as it will be sent (signature and paymasterData at their final
 * lengths): the larger of
 * - the calldata formula (calldataGasV07) + 5 %, Patron's own margin as on v0.6;
 * - what alto (`@pimlico/alto` 0.0.20, the bundler the tests run) demands of the same op on an L1 without
 *   EIP-7623 pricing, since a bundler refuses an op below its own figure;
 * plus, for the first, 25,000 when the op carries an EIP-7702 authorization: the bundler pays
 * PER_EMPTY_ACCOUNT_COST for it in the type-4 transaction, and the EntryPoint cannot see it (alto counts it).
 */
export function preVerificationGasV07(op: UnpackedUserOperationV07): bigint {
  // Both rules count the same sender, nonce, initCode, callData and paymaster: counted once (on every request).
  const shared = sharedCounts(op);
  const own = ceilDiv(ownGas(packedCount(op, 'max', shared)) * 105n, 100n);
  const alto = altoGas(op, shared);
  const auth = op.eip7702Auth === undefined ? 0n : EIP7702_AUTH_GAS;
  return own + auth > alto ? own + auth : alto;
}

/** What both rules count alike: sender and nonce (non-zero bytes), initCode, callData, the paymaster's address. */
interface SharedCounts {
  readonly head: number;
  readonly initCode: CalldataCount;
  readonly callData: CalldataCount;
  readonly paymaster: number;
}

function sharedCounts(op: UnpackedUserOperationV07): SharedCounts {
  return {
    head: hexNonZero(op.sender) + uintNonZero(op.nonce),
    initCode:
      op.factory === undefined
        ? { bytes: 0, nonZero: 0 }
        : {
            bytes: hexSize(op.factory) + hexSize(op.factoryData ?? '0x'),
            nonZero: hexNonZero(op.factory) + hexNonZero(op.factoryData ?? '0x'),
          },
    callData: bytesField(op.callData),
    paymaster: op.paymaster === undefined ? 0 : hexNonZero(op.paymaster),
  };
}

/** EIP-7702's PER_EMPTY_ACCOUNT_COST, what an authorization costs the bundle transaction. */
export const EIP7702_AUTH_GAS = 25_000n;

/**
 * The op's packed tuple as it appears in handleOps, counted (calldataCount.ts), with every gas field and the
 * paymaster's gas limits at their largest (all non-zero bytes), so the count never depends on the values estimated
 * later: 9 head words (sender, nonce, the initCode and callData offsets, accountGasLimits, preVerificationGas,
 * gasFees, the paymasterAndData and signature offsets), then the four `bytes` fields. With `ones`, the signature and
 * paymasterData are priced as 0xff throughout, as alto prices data it cannot know yet.
 */
export function packedCount(
  op: UnpackedUserOperationV07,
  fill: 'max' | 'ones',
  shared: SharedCounts = sharedCounts(op),
): CalldataCount {
  const paymasterData = op.paymasterData ?? '0x';
  // paymaster ‖ two uint128 limits at their largest ‖ paymasterData
  const paymasterAndData =
    op.paymaster === undefined
      ? { bytes: 0, nonZero: 0 }
      : {
          bytes: 52 + hexSize(paymasterData),
          nonZero: shared.paymaster + 32 + (fill === 'ones' ? hexSize(paymasterData) : hexNonZero(paymasterData)),
        };
  const signature = fill === 'ones' ? onesField(hexSize(op.signature)) : bytesField(op.signature);
  const tail = dynamicFields(9, [shared.initCode, shared.callData, paymasterAndData, signature]);
  // sender, nonce, and three words of 0xff (accountGasLimits, preVerificationGas, gasFees)
  const head = shared.head + 3 * 32;
  return { bytes: 5 * 32 + tail.bytes, nonZero: head + tail.nonZero };
}

/**
 * The reference formula as on v0.6 (eth-infinitism's bundler): 21,000 per bundle of one, 18,300 per op, 4 per
 * 32-byte word of the packed op, and its bytes at 4 (zero) / 16 (non-zero).
 */
export function calldataGasV07(op: UnpackedUserOperationV07): bigint {
  return ownGas(packedCount(op, 'max'));
}

const ownGas = (packed: CalldataCount): bigint =>
  calldataCost(packed) + 21_000n + 18_300n + 4n * BigInt(packed.bytes / 32);

/**
 * alto 0.0.20's required preVerificationGas for a v0.7+ op on a chain without EIP-7623 pricing or an L2 fee
 * (its calcExecutionPvgComponent, restated from reading it): 4 gas per calldata token (a zero byte is one
 * token, a non-zero byte four) of the op's encoding with signature and paymasterData as 0xff, plus 21,000
 * (transaction stipend) + 9,830 (bundle overhead) + 7,260 per op (+25,000 with an EIP-7702 authorization),
 * plus either 9.2 gas per 32-byte word of callData, or for an `executeUserOp` call 1,610 + 8.2 per word of
 * the encoded op.
 */
export function altoPreVerificationGas(op: UnpackedUserOperationV07): bigint {
  return altoGas(op, sharedCounts(op));
}

function altoGas(op: UnpackedUserOperationV07, shared: SharedCounts): bigint {
  const own = packedCount(op, 'ones', shared);
  // alto encodes the tuple alone, so its leading offset word (0x20) is counted too.
  const packed = { bytes: own.bytes + 32, nonZero: own.nonZero + 1 };
  const opWords = BigInt(packed.bytes / 32);
  let perOp = 7_260n + (op.eip7702Auth === undefined ? 0n : EIP7702_AUTH_GAS);
  if (op.callData.slice(0, 10).toLowerCase() === EXECUTE_USER_OP_SELECTOR) {
    perOp += 1_610n + (8_200n * opWords) / 1000n;
  } else {
    perOp += (BigInt(Math.ceil(hexSize(op.callData) / 32)) * 9_200n) / 1000n;
  }
  return calldataCost(packed) + 21_000n + 9_830n + perOp;
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
