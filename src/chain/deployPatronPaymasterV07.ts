import { fileURLToPath } from 'node:url';
import { type Address, getAddress, parseAbi } from 'viem';
import { type ContractArtifact, readContractArtifact } from './artifacts.js';
import { type DevClient, waitForSuccess } from './devClient.js';

// This file is src/chain/ under tsx and dist/chain/ when built: both two levels below the package root.
const artifactPath = fileURLToPath(new URL('../../build/contracts/PatronPaymasterV07.json', import.meta.url));

/** build/contracts/PatronPaymasterV07.json (scripts/build-contracts.mjs); throws with the fix when never built. */
export function loadPatronPaymasterV07Artifact(): ContractArtifact {
  return readContractArtifact(artifactPath, 'run `npm run build:contracts`');
}

/**
 * The ABI of contracts/PatronPaymasterV07.sol, written out so viem infers argument and return types. The
 * contract tests assert that it equals the compiled artifact's ABI, so drift fails CI instead of a call.
 */
export const patronPaymasterV07Abi = parseAbi([
  'struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }',
  'constructor(address entryPoint_, address owner_, address signer_)',
  'function MODE_SPONSORED() view returns (uint8)',
  'function MODE_TOKEN() view returns (uint8)',
  'function MODE_TOKEN_GUARANTEED() view returns (uint8)',
  'function MODE_TOKEN_PERMIT() view returns (uint8)',
  'function POST_OP_OVERHEAD() view returns (uint256)',
  'function MIN_PRICE_MARKUP() view returns (uint32)',
  'function MAX_PRICE_MARKUP() view returns (uint32)',
  'function SPONSORED_LENGTH() view returns (uint256)',
  'function SPONSORED_SUFFIXED_LENGTH() view returns (uint256)',
  'function TOKEN_LENGTH() view returns (uint256)',
  'function TOKEN_SUFFIXED_LENGTH() view returns (uint256)',
  'function TOKEN_PERMIT_LENGTH() view returns (uint256)',
  'function MAX_PERMIT_SIGNATURE_LENGTH() view returns (uint256)',
  'function entryPoint() view returns (address)',
  'function entryPointVersion() view returns (uint8)',
  'function maxPenaltyGas(uint256 callGasLimit, uint256 postOpGasLimit) view returns (uint256)',
  'function isSigner(address signer) view returns (bool)',
  'function signers() view returns (address[])',
  'function feeReceiver() view returns (address)',
  'function owner() view returns (address)',
  'function pendingOwner() view returns (address)',
  'function validatePaymasterUserOp(PackedUserOperation userOp, bytes32 userOpHash, uint256 maxCost) returns (bytes context, uint256 validationData)',
  'function postOp(uint8 mode, bytes context, uint256 actualGasCost, uint256 actualUserOpFeePerGas)',
  'function getSponsoredHash(PackedUserOperation userOp, uint48 validUntil, uint48 validAfter, uint64 maxVerificationGasLimit, uint64 maxCallGasLimit, uint64 maxPreVerificationGas) view returns (bytes32)',
  'function getTokenHash(PackedUserOperation userOp, uint8 mode, uint48 validUntil, uint48 validAfter, uint64 maxVerificationGasLimit, uint64 maxCallGasLimit, uint64 maxPreVerificationGas, address token, uint128 exchangeRate, uint32 priceMarkup, uint128 maxTokenCost) view returns (bytes32)',
  'function getPermitHash(bytes32 tokenHash, uint256 permitValue, bytes permitSignature) pure returns (bytes32)',
  'function addSigner(address signer)',
  'function removeSigner(address signer)',
  'function setFeeReceiver(address newReceiver)',
  'function transferOwnership(address newOwner)',
  'function acceptOwnership()',
  'function renounceOwnership() view',
  'function deposit() payable',
  'function getDeposit() view returns (uint256)',
  'function withdrawTo(address withdrawAddress, uint256 amount)',
  'function withdrawTokens(address token, address to, uint256 amount)',
  'function addStake(uint32 unstakeDelaySec) payable',
  'function unlockStake()',
  'function withdrawStake(address withdrawAddress)',
  'event SignerAdded(address indexed signer)',
  'event SignerRemoved(address indexed signer)',
  'event FeeReceiverChanged(address indexed previousReceiver, address indexed newReceiver)',
  'event TokenCharged(address indexed account, address indexed token, uint256 charge, uint256 actualGasCost)',
  'event OwnershipTransferStarted(address indexed previousOwner, address indexed newOwner)',
  'event OwnershipTransferred(address indexed previousOwner, address indexed newOwner)',
  'error ZeroAddress()',
  'error SignerAlreadyAdded(address signer)',
  'error NotASigner(address signer)',
  'error UnsupportedEntryPoint(address entryPoint)',
  'error UnknownMode(uint8 mode)',
  'error InvalidPaymasterDataLength(uint256 length, uint256 expected)',
  'error RenounceOwnershipDisabled()',
  'error PriceMarkupOutOfRange(uint32 priceMarkup)',
  'error TokenBalanceTooLow(address token, uint256 balance, uint256 maxTokenCost)',
  'error TokenAllowanceTooLow(address token, uint256 allowance, uint256 maxTokenCost)',
  'error TokenPrefundFailed(address token, uint256 maxTokenCost)',
  'error TokenPermitFailed(address token, uint256 allowance, uint256 maxTokenCost, bytes reason)',
  'error PermitSignatureTooLong(uint256 length, uint256 maximum)',
  'error PaymasterUnauthorized(address sender)',
  'error SafeERC20FailedOperation(address token)',
  'error OutOfRangeAccess()',
  'error OwnableInvalidOwner(address owner)',
  'error OwnableUnauthorizedAccount(address account)',
]);

export interface DeployPatronPaymasterV07Params {
  readonly client: DevClient;
  /** The canonical EntryPoint v0.7, v0.8 or v0.9 (the contract derives its version from the address). */
  readonly entryPoint: Address;
  readonly owner: Address;
  readonly verifyingSigner: Address;
}

/** Deploys PatronPaymasterV07 for one EntryPoint (plain CREATE from the client's account); returns its address. */
export async function deployPatronPaymasterV07(params: DeployPatronPaymasterV07Params): Promise<Address> {
  const { client, entryPoint, owner, verifyingSigner } = params;
  const hash = await client.deployContract({
    abi: patronPaymasterV07Abi,
    bytecode: loadPatronPaymasterV07Artifact().bytecode,
    args: [entryPoint, owner, verifyingSigner],
  });
  const receipt = await waitForSuccess(client, hash, 'PatronPaymasterV07 deployment');
  if (receipt.contractAddress == null) throw new Error('PatronPaymasterV07 deployment returned no address');
  return getAddress(receipt.contractAddress);
}
