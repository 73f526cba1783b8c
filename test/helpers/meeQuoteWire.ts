import { SimpleMerkleTree } from '@openzeppelin/merkle-tree';
import { type Address, concat, decodeAbiParameters, encodeAbiParameters, type Hex, keccak256, size, slice } from 'viem';
import { entryPoint07Address, getUserOperationHash, type UserOperation } from 'viem/account-abstraction';

/**
 * The quote an MEE node answers to abstractjs 1.2.3's `getQuote` (its `GetQuotePayload`) as it travels, and the
 * hashes over it as the node, abstractjs and the K1 MEE validator compute them (built by meeQuote.ts).
 *
 * Wire form: abstractjs types `paymentInfo.callGasLimit`/`verificationGasLimit` as bigint, but the SDK sends them
 * through viem's `stringify` (bigint → decimal string) and the node answers JSON, so on the wire, and in what
 * `getQuote` really returns, they are decimal strings. `MeeQuote` is that wire shape.
 */
/**
 * abstractjs 1.2.3's `MeeFilledUserOp` (dist/_types/clients/decorators/mee/getQuote.d.ts), restated: its index
 * re-exports extensionless paths that NodeNext resolution cannot follow, so its types reach us as `any`.
 */
export interface MeeFilledUserOp {
  sender: Address;
  nonce: string;
  initCode: Hex;
  callData: Hex;
  callGasLimit: string;
  verificationGasLimit: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  paymasterAndData: Hex;
  preVerificationGas: string;
  signature?: Hex;
}

/** abstractjs 1.2.3's `MeeFilledUserOpDetails`, restated (fields Patron never reads are left `unknown`). */
export interface MeeFilledUserOpDetails {
  userOp: MeeFilledUserOp;
  userOpHash: Hex;
  meeUserOpHash: Hex;
  lowerBoundTimestamp: string;
  upperBoundTimestamp: string;
  maxGasLimit: string;
  maxFeePerGas: string;
  chainId: string;
  eip7702Auth?: unknown;
  isCleanUpUserOp?: boolean;
  sessionDetails?: unknown;
  shortEncoding: boolean;
  metadata?: unknown[];
  signature?: Hex;
  isConfirmed?: boolean;
  executionSimulationRetryDelay?: string;
}

export interface MeeQuotePaymentInfo {
  sponsored: boolean;
  sender: Address;
  token: Address;
  nonce: string;
  chainId: string;
  callGasLimit: string;
  verificationGasLimit: string;
  sponsorshipUrl?: string;
  initCode?: Hex;
  shortEncoding?: boolean;
  eoa?: Address;
  tokenAmount: string;
  tokenWeiAmount: string;
  tokenValue: string;
}

export interface MeeQuote {
  hash: Hex;
  node: Address;
  commitment: Hex;
  paymentInfo: MeeQuotePaymentInfo;
  userOps: MeeFilledUserOpDetails[];
  quoteType?: 'simple';
}

/** The quote's packed-style op (initCode, paymasterAndData) as viem's unpacked v0.7 UserOperation. */
export function toViemUserOperation(op: MeeFilledUserOp): UserOperation<'0.7'> {
  const initCode = op.initCode === undefined || op.initCode === '0x' ? undefined : op.initCode;
  const pmd = op.paymasterAndData === '0x' ? undefined : op.paymasterAndData;
  return {
    sender: op.sender,
    nonce: BigInt(op.nonce),
    callData: op.callData,
    callGasLimit: BigInt(op.callGasLimit),
    verificationGasLimit: BigInt(op.verificationGasLimit),
    preVerificationGas: BigInt(op.preVerificationGas),
    maxFeePerGas: BigInt(op.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(op.maxPriorityFeePerGas),
    signature: op.signature ?? '0x',
    ...(initCode === undefined ? {} : { factory: slice(initCode, 0, 20), factoryData: slice(initCode, 20) }),
    ...(pmd === undefined
      ? {}
      : {
          paymaster: slice(pmd, 0, 20),
          paymasterVerificationGasLimit: BigInt(slice(pmd, 20, 36)),
          paymasterPostOpGasLimit: BigInt(slice(pmd, 36, 52)),
          paymasterData: size(pmd) > 52 ? slice(pmd, 52) : '0x',
        }),
  };
}

/** The EntryPoint v0.7 hash of a quote op on its chain (the signature field is not part of it). */
export function meeOpUserOpHash(args: { op: MeeFilledUserOp; chainId: number }): Hex {
  return getUserOperationHash({
    chainId: args.chainId,
    entryPointAddress: entryPoint07Address,
    entryPointVersion: '0.7',
    userOperation: toViemUserOperation(args.op),
  });
}

/**
 * keccak256(bytes.concat(keccak256(abi.encode(bytes32 userOpHash, uint256 lowerBound, uint256 upperBound)))):
 * bcnmy/mee-contracts contracts/lib/util/MEEUserOpHashLib.sol `getMEEUserOpHash` (the bounds are uint256 there,
 * though the signature carries them as uint48), which the K1 MEE validator recomputes and proves against the root.
 * abstractjs 1.2.3 never computes it (it takes the node's `meeUserOpHash`); its EIP-712 `MeeUserOp` type in
 * signQuote.js uses the same (bytes32, uint256, uint256).
 */
export function meeUserOpHashOf(args: { userOpHash: Hex; lowerBound: bigint; upperBound: bigint }): Hex {
  const inner = keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'uint256' }, { type: 'uint256' }],
      [args.userOpHash, args.lowerBound, args.upperBound],
    ),
  );
  return keccak256(concat([inner]));
}

/** The leaves as abstractjs sponsorSupertransaction picks them: userOpHash when shortEncoding, else meeUserOpHash. */
export function quoteLeaves(quote: Pick<MeeQuote, 'userOps'>): Hex[] {
  return quote.userOps.map((op) => (op.shortEncoding ? op.userOpHash : op.meeUserOpHash));
}

/** The root abstractjs (modules/utils/merkle-tree.js) rebuilds: OpenZeppelin SimpleMerkleTree, sorted leaves. */
export function quoteRoot(quote: Pick<MeeQuote, 'userOps'>): Hex {
  return SimpleMerkleTree.of(quoteLeaves(quote), { sortLeaves: true }).root as Hex;
}

/** abstractjs DEFAULT_PREFIX / mee-contracts SIG_TYPE_SIMPLE: the sponsor's signature of a simple-mode supertransaction. */
export const SIG_TYPE_SIMPLE: Hex = '0x177eee00';

/**
 * userOps[0].userOp.signature as abstractjs sponsorSupertransaction writes it: SIG_TYPE_SIMPLE ‖ abi.encode(bytes32
 * root, uint48 lowerBound, uint48 upperBound, bytes32[] proof of leaf 0, bytes 65-byte EIP-191 signature of the root).
 */
export function decodeSponsorSignature(signature: Hex): {
  root: Hex;
  lowerBound: number;
  upperBound: number;
  proof: Hex[];
  signature: Hex;
} {
  if (size(signature) < 4 || slice(signature, 0, 4) !== SIG_TYPE_SIMPLE) {
    throw new Error(`not a ${SIG_TYPE_SIMPLE} signature: ${signature.slice(0, 10)}`);
  }
  const [root, lowerBound, upperBound, proof, sig] = decodeAbiParameters(
    [{ type: 'bytes32' }, { type: 'uint48' }, { type: 'uint48' }, { type: 'bytes32[]' }, { type: 'bytes' }],
    slice(signature, 4),
  );
  return { root, lowerBound, upperBound, proof: [...proof], signature: sig };
}
