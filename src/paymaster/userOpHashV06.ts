import { type Address, encodeAbiParameters, type Hex, keccak256 } from 'viem';
import type { UserOperationV06 } from './patronPaymasterV06.js';

/**
 * EntryPoint v0.6's `getUserOpHash`: keccak256(abi.encode(keccak256(pack(op)), entryPoint, chainId)), where
 * pack(op) encodes every field but the signature, the byte fields hashed (EntryPoint.sol, UserOperationLib.pack).
 * It is the key the EntryPoint's UserOperationEvent carries, so the spend ledger keys reservations by it and
 * settlement finds them from the event. Only computed when a reservation is made.
 */
export function userOpHashV06(args: { userOp: UserOperationV06; entryPoint: Address; chainId: number }): Hex {
  const op = args.userOp;
  const packed = encodeAbiParameters(
    [
      { type: 'address' },
      { type: 'uint256' },
      { type: 'bytes32' },
      { type: 'bytes32' },
      { type: 'uint256' },
      { type: 'uint256' },
      { type: 'uint256' },
      { type: 'uint256' },
      { type: 'uint256' },
      { type: 'bytes32' },
    ],
    [
      op.sender,
      op.nonce,
      keccak256(op.initCode),
      keccak256(op.callData),
      op.callGasLimit,
      op.verificationGasLimit,
      op.preVerificationGas,
      op.maxFeePerGas,
      op.maxPriorityFeePerGas,
      keccak256(op.paymasterAndData),
    ],
  );
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'address' }, { type: 'uint256' }],
      [keccak256(packed), args.entryPoint, BigInt(args.chainId)],
    ),
  );
}
