import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { type Abi, type Hex, parseAbi } from 'viem';
import { z } from 'zod';

/**
 * Contract artifacts: Patron's own paymaster from build/contracts (written by scripts/build-contracts.mjs), and
 * the eth-infinitism EntryPoint v0.6 stack read from node_modules at run time. The latter are never copied
 * into this repository: the sample sources are GPL-3.0, and the npm artifacts are byte-identical to the
 * canonical deployments, so depending on the package keeps us honest about both.
 */

const hexSchema = z.string().regex(/^0x(?:[0-9a-fA-F]{2})*$/, 'expected 0x-prefixed even-length hex');

// A light structural check: every ABI item is an object with a known `type`. Validating the full ABI grammar
// would duplicate abitype; the contract tests compare the ABI with the typed one below instead.
const abiSchema = z.array(
  z.looseObject({ type: z.enum(['function', 'constructor', 'event', 'error', 'fallback', 'receive']) }),
);

const artifactSchema = z.object({
  contractName: z.string().min(1),
  abi: abiSchema,
  bytecode: hexSchema,
  deployedBytecode: hexSchema,
});

const patronArtifactSchema = artifactSchema.extend({
  solcVersion: z.string().min(1),
  sourceHash: z.string().regex(/^0x[0-9a-f]{64}$/),
});

export interface ContractArtifact {
  readonly contractName: string;
  readonly abi: Abi;
  readonly bytecode: Hex;
  readonly deployedBytecode: Hex;
}

export interface PatronArtifact extends ContractArtifact {
  readonly solcVersion: string;
  readonly sourceHash: string;
}

function toArtifact(parsed: z.infer<typeof artifactSchema>): ContractArtifact {
  return {
    contractName: parsed.contractName,
    // The zod check above guarantees the shape viem relies on; the item-level grammar is abitype's concern.
    abi: parsed.abi as unknown as Abi,
    bytecode: parsed.bytecode as Hex,
    deployedBytecode: parsed.deployedBytecode as Hex,
  };
}

function readJson(path: string, hint: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new Error(`contract artifact not found: ${path} (${hint})`, { cause });
  }
  return JSON.parse(text);
}

// This file is src/chain/artifacts.ts under tsx and dist/chain/artifacts.js when built: both are two levels
// below the package root, so one relative URL serves both.
const patronArtifactPath = fileURLToPath(new URL('../../build/contracts/PatronPaymaster.json', import.meta.url));

/** build/contracts/PatronPaymaster.json; throws with the fix when it was never built. */
export function loadPatronPaymasterArtifact(): PatronArtifact {
  const raw = readJson(patronArtifactPath, 'run `npm run build:contracts`');
  const parsed = patronArtifactSchema.parse(raw);
  return { ...toArtifact(parsed), solcVersion: parsed.solcVersion, sourceHash: parsed.sourceHash };
}

/** Contracts of ours that exist for the dev chain and tests only (never deployed to a real chain). */
export type DevContractName = 'DevToken' | 'DevFiatToken' | 'DevPriceFeed';

/** build/contracts/<name>.json for a dev-only contract of ours. */
export function loadDevContractArtifact(name: DevContractName): ContractArtifact {
  const path = fileURLToPath(new URL(`../../build/contracts/${name}.json`, import.meta.url));
  return toArtifact(artifactSchema.parse(readJson(path, 'run `npm run build:contracts`')));
}

/** contracts/DevToken.sol: a standard ERC-20 plus an open `mint` and deploy-time decimals. */
export const devTokenAbi = parseAbi([
  'constructor(string name_, string symbol_, uint8 decimals_)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address account) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 value) returns (bool)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
  'function mint(address to, uint256 amount)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
]);

/**
 * contracts/DevFiatToken.sol: DevToken with the EIP-2612 permit of Circle's FiatToken v2.2 (the dev chain's USDC):
 * the bytes and (v, r, s) forms, no TIMESTAMP read at the maximum deadline, ERC-1271 for an owner with code.
 */
export const devFiatTokenAbi = [
  ...devTokenAbi,
  ...parseAbi([
    'function version() pure returns (string)',
    'function nonces(address owner) view returns (uint256)',
    'function DOMAIN_SEPARATOR() view returns (bytes32)',
    'function PERMIT_TYPEHASH() view returns (bytes32)',
    'function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)',
    'function permit(address owner, address spender, uint256 value, uint256 deadline, bytes signature)',
  ]),
] as const;

/** contracts/DevPriceFeed.sol: Chainlink's AggregatorV3Interface plus open setters for tests and the dev chain. */
export const devPriceFeedAbi = parseAbi([
  'constructor(uint8 decimals_, string description_, int256 initialAnswer)',
  'function decimals() view returns (uint8)',
  'function description() view returns (string)',
  'function version() view returns (uint256)',
  'function getRoundData(uint80 roundId) view returns (uint80, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
  'function setAnswer(int256 answer, uint256 updatedAt)',
  'function setRound(int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
  'event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt)',
  'event NewRound(uint256 indexed roundId, address indexed startedBy, uint256 startedAt)',
  'error NoDataPresent()',
]);

/** A contract of Biconomy Smart Account v2, compiled by scripts/build-contracts.mjs from its npm sources. */
export type BiconomySmartAccountV2ContractName =
  | 'SmartAccountFactory'
  | 'Proxy'
  | 'DefaultCallbackHandler'
  | 'SmartAccount'
  | 'EcdsaOwnershipRegistryModule';

/** Where solc left room for each immutable in the runtime code: AST id → byte ranges. */
export type ImmutableReferences = Readonly<
  Record<string, readonly { readonly start: number; readonly length: number }[]>
>;

const biconomyArtifactSchema = artifactSchema.extend({
  immutableReferences: z.record(z.string(), z.array(z.object({ start: z.number().int(), length: z.number().int() }))),
});

/** build/contracts/biconomy/<name>.json, with the runtime code's immutable positions. */
export function loadBiconomySmartAccountV2Artifact(
  name: BiconomySmartAccountV2ContractName,
): ContractArtifact & { readonly immutableReferences: ImmutableReferences } {
  const path = fileURLToPath(new URL(`../../build/contracts/biconomy/${name}.json`, import.meta.url));
  const parsed = biconomyArtifactSchema.parse(readJson(path, 'run `npm run build:contracts`'));
  return { ...toArtifact(parsed), immutableReferences: parsed.immutableReferences };
}

export type AccountAbstractionV06ContractName = 'EntryPoint' | 'SimpleAccountFactory' | 'SimpleAccount';

/** Reads and validates a Hardhat-format artifact (`abi`, `bytecode`, `deployedBytecode`); `hint` says how to get it. */
export function readContractArtifact(path: string, hint: string): ContractArtifact {
  return toArtifact(artifactSchema.parse(readJson(path, hint)));
}

/** An artifact of @account-abstraction/contracts@0.6.0, resolved through Node's module resolution. */
export function loadAccountAbstractionV06Artifact(name: AccountAbstractionV06ContractName): ContractArtifact {
  const require = createRequire(import.meta.url);
  const path = require.resolve(`@account-abstraction/contracts/artifacts/${name}.json`);
  return readContractArtifact(path, 'install @account-abstraction/contracts@0.6.0');
}

/**
 * The ABI of contracts/PatronPaymaster.sol, written out so viem infers argument and return types. The
 * contract tests assert that it equals the compiled artifact's ABI, so drift fails CI instead of a call.
 */
export const patronPaymasterAbi = parseAbi([
  'struct UserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; uint256 callGasLimit; uint256 verificationGasLimit; uint256 preVerificationGas; uint256 maxFeePerGas; uint256 maxPriorityFeePerGas; bytes paymasterAndData; bytes signature; }',
  'constructor(address entryPoint_, address owner_, address signer_)',
  'function MODE_SPONSORED() view returns (uint8)',
  'function MODE_TOKEN() view returns (uint8)',
  'function MODE_TOKEN_GUARANTEED() view returns (uint8)',
  'function POST_OP_OVERHEAD() view returns (uint256)',
  'function MIN_PRICE_MARKUP() view returns (uint32)',
  'function MAX_PRICE_MARKUP() view returns (uint32)',
  'function feeReceiver() view returns (address)',
  'function setFeeReceiver(address newReceiver)',
  'function unpaidCharges(address account, address token) view returns (uint256 amount)',
  'function collectUnpaidCharge(address account, address token)',
  'function getTokenHash(UserOperation userOp, uint8 mode, uint48 validUntil, uint48 validAfter, address token, uint128 exchangeRate, uint32 priceMarkup, uint128 maxTokenCost) view returns (bytes32)',
  'event FeeReceiverChanged(address indexed previousReceiver, address indexed newReceiver)',
  'event TokenCharged(address indexed account, address indexed token, uint256 charge, uint256 actualGasCost)',
  'event TokenChargeFailed(address indexed account, address indexed token, uint256 charge, uint256 actualGasCost)',
  'event UnpaidChargeCollected(address indexed account, address indexed token, uint256 amount)',
  'error PriceMarkupOutOfRange(uint32 priceMarkup)',
  'error NothingToCollect()',
  'error SafeERC20FailedOperation(address token)',
  'function entryPoint() view returns (address)',
  'function isSigner(address signer) view returns (bool)',
  'function signers() view returns (address[])',
  'function owner() view returns (address)',
  'function pendingOwner() view returns (address)',
  'function validatePaymasterUserOp(UserOperation userOp, bytes32, uint256) returns (bytes context, uint256 validationData)',
  'function postOp(uint8 mode, bytes context, uint256 actualGasCost)',
  'function getSponsoredHash(UserOperation userOp, uint48 validUntil, uint48 validAfter) view returns (bytes32)',
  'function addSigner(address signer)',
  'function removeSigner(address signer)',
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
  'event OwnershipTransferStarted(address indexed previousOwner, address indexed newOwner)',
  'event OwnershipTransferred(address indexed previousOwner, address indexed newOwner)',
  'error NotEntryPoint(address caller)',
  'error ZeroAddress()',
  'error SignerAlreadyAdded(address signer)',
  'error NotASigner(address signer)',
  'error UnknownMode(uint8 mode)',
  'error InvalidPaymasterDataLength(uint256 length, uint256 expected)',
  'error RenounceOwnershipDisabled()',
  'error OwnableInvalidOwner(address owner)',
  'error OwnableUnauthorizedAccount(address account)',
]);
