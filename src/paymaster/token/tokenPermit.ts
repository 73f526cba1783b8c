import { type Address, decodeErrorResult, erc20Abi, type Hex, parseAbi } from 'viem';
import type { ChainRuntime } from '../../chain/chainRegistry.js';
import type { ChainFees } from '../../chain/feeOracle.js';
import type { PermitModeSupport } from '../../chain/permitModeSupport.js';
import type { SigningBounds } from '../../config/boundsSettings.js';
import { SimulationFailedError, TokenPaymentError, UnsupportedError } from '../../errors/PatronError.js';
import type { QuotableToken } from '../../tokens/tokenCatalog.js';
import {
  type EntryPointModule,
  finalUserOperation,
  type GasLimits,
  type PaymasterFields,
  type SenderFacts,
  STUB_PERMIT,
  type ValidityWindow,
} from '../entryPoints/entryPointModule.js';
import type { TokenPermit } from '../entryPoints/paymasterModes.js';
import { maxTokenCostOf } from '../entryPoints/tokenMath.js';
import { assertGasWithinBounds, gasCapsFor } from '../gasBounds.js';
import { maxBig } from '../maxBig.js';
import type { PartialUserOperation } from '../partialUserOperation.js';
import { gasBoundsOf } from '../signingPipeline.js';
import type { SpendGuard } from '../spendGuard.js';
import { approvalInCallData } from './callDataApproval.js';

/**
 * The token mode's permit (mode 3, docs/guides/token-mode.md "First-time users: the permit"): an account that never
 * approved the paymaster signs the token's EIP-2612 permit for it instead, which the paymaster executes in validation
 * before mode 1's prefund. Here: what the stub asks the account to sign (`requestPermit`), whether a permit can be
 * used at all on a chain (`assertPermitUsable`), and the token's refusal of one told the caller (`permitRefusal`).
 */

/** The deadline the permit is signed with: the maximum, at which USDC's permit reads no TIMESTAMP (ERC-7562). */
export const PERMIT_DEADLINE = (1n << 256n) - 1n;

/** What the account is asked to sign: EIP-2612's Permit in the token's EIP-712 domain. */
export interface PermitRequest {
  readonly token: Address;
  /** The token's EIP-712 domain name and version (read from it and checked: tokenMetadata.ts). */
  readonly name: string;
  readonly version: string;
  readonly chainId: number;
  readonly owner: Address;
  readonly spender: Address;
  /** The most the final data can be signed for at the op's caps: the least the permit must allow. */
  readonly value: bigint;
  /** The token's `nonces(owner)` now. */
  readonly nonce: bigint;
  readonly deadline: bigint;
}

const noncesAbi = parseAbi(['function nonces(address owner) view returns (uint256)']);

/** Why a permit cannot be carried here, or undefined: the token's permit, the EntryPoint, the deployment. */
async function permitUnavailable(args: {
  readonly ep: EntryPointModule;
  readonly chain: ChainRuntime;
  readonly token: QuotableToken;
  readonly permitModes: PermitModeSupport;
}): Promise<string | undefined> {
  const { chain, token } = args;
  if (token.permit === undefined) {
    return `${token.symbol} (${token.address}) is not configured with a permit Patron can execute; approve the paymaster ${chain.paymaster} for it before the operation`;
  }
  if (args.ep.version === '0.6') {
    return `the permit mode is served on EntryPoint v0.7 and later; on v0.6 approve the paymaster ${chain.paymaster} for ${token.symbol} before the operation`;
  }
  if (!(await args.permitModes.supported(chain))) {
    return `the paymaster ${chain.paymaster} on chain ${chain.chainId} was deployed before the permit mode (it has no MODE_TOKEN_PERMIT): its owner deploys a current one (\`patron paymaster deploy\`); meanwhile approve it for ${token.symbol} before the operation`;
  }
  return undefined;
}

/** Refuses a permit that cannot be used (UnsupportedError, -32030), naming why and what to do instead. */
export async function assertPermitUsable(args: Parameters<typeof permitUnavailable>[0]): Promise<void> {
  const why = await permitUnavailable(args);
  if (why !== undefined) throw new UnsupportedError(`A permit cannot pay here: ${why}`);
}

export interface PermitRequestArgs {
  readonly ep: EntryPointModule;
  readonly chain: ChainRuntime;
  readonly op: PartialUserOperation;
  readonly token: QuotableToken;
  readonly sender: SenderFacts | undefined;
  readonly window: ValidityWindow;
  readonly bounds: SigningBounds;
  /** The chain's fees as the request read them (the L1 fee of an L2's preVerificationGas bound among them). */
  readonly fees: ChainFees;
  readonly spend: SpendGuard;
  readonly permitModes: PermitModeSupport;
  /** The version's stub of these fields (a permit of STUB_PERMIT's length, or the sponsored stub). */
  readonly stub: (permit: TokenPermit | undefined) => PaymasterFields;
}

/**
 * The permit the stub asks for, or undefined when there is none to ask: the token has no permit, the EntryPoint or
 * the deployment has no permit mode, the op batches its own approval of the paymaster (it pays that way), it names no
 * maxFeePerGas yet, or the allowance in place already covers the value. The value is the maximum charge at the caps
 * the final data may be signed over (gasBounds.ts gasCapsFor) of the op's limits, or of Patron's estimate when the op
 * gives none (the stub comes before the bundler's estimate): at least what the final data takes.
 */
export async function requestPermit(args: PermitRequestArgs): Promise<PermitRequest | undefined> {
  const { ep, chain, op, token } = args;
  if (op.maxFeePerGas === 0n || approvalInCallData(op.callData, chain.paymaster) !== undefined) return undefined;
  if ((await permitUnavailable(args)) !== undefined || token.permit === undefined) return undefined;
  const paymasterGas = ep.paymasterGas('ERC20_PERMIT');
  const gas = gasBoundsOf({
    ep,
    op,
    paymasterGas,
    sender: args.sender,
    fields: args.stub(STUB_PERMIT),
    bounds: args.bounds,
    fees: args.fees,
  });
  const reads = Promise.all([
    chain.client.readContract({
      address: token.address,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [op.sender, chain.paymaster],
    }),
    chain.client.readContract({ address: token.address, abi: noncesAbi, functionName: 'nonces', args: [op.sender] }),
  ]);
  reads.catch(() => undefined);
  const limits = await limitsOf(args, paymasterGas, gas.preVerificationGasNeeded);
  const caps = gasCapsFor(limits, gas);
  const priced = { ...limits, ...paymasterGas, gasCaps: caps };
  assertGasWithinBounds({ gas, limits, caps, worstCaseWei: ep.worstCaseCost(priced, op.maxFeePerGas) });
  const value = maxTokenCostOf(ep.maxChargeWei(priced, op.maxFeePerGas), token);
  const [allowance, nonce] = await reads;
  if (allowance >= value) return undefined;
  return {
    token: token.address,
    ...token.permit,
    chainId: chain.chainId,
    owner: op.sender,
    spender: chain.paymaster,
    value,
    nonce,
    deadline: PERMIT_DEADLINE,
  };
}

/** The op's own limits when it gives all three, else Patron's estimate (as a token quote makes it). */
async function limitsOf(
  args: PermitRequestArgs,
  paymasterGas: ReturnType<EntryPointModule['paymasterGas']>,
  preVerificationGasNeeded: bigint,
): Promise<GasLimits> {
  const { op, ep } = args;
  const { callGasLimit, verificationGasLimit, preVerificationGas } = op;
  if (callGasLimit && verificationGasLimit && preVerificationGas) {
    return { callGasLimit, verificationGasLimit, preVerificationGas };
  }
  // Measured with the sponsored stub, as a quote is: it needs no token balance, and the paymaster's own limits
  // (mode 3's) cover its side; preVerificationGas is sized for the permit's data.
  await args.spend.simulation(ep.simulations({ verified: false }));
  const estimate = await ep.estimate({
    chain: args.chain,
    op: finalUserOperation(op, op, paymasterGas, args.sender),
    fields: args.stub(undefined),
    callerPreVerificationGas: preVerificationGas,
  });
  return {
    callGasLimit: estimate.callGasLimit,
    verificationGasLimit: estimate.verificationGasLimit,
    preVerificationGas: maxBig(estimate.preVerificationGas, preVerificationGasNeeded),
  };
}

const permitFailedAbi = parseAbi([
  'error TokenPermitFailed(address token, uint256 allowance, uint256 maxTokenCost, bytes reason)',
  'error Error(string)',
]);

/**
 * The simulation of an op carrying a permit failed because the token refused the permit (PatronPaymasterV07's
 * TokenPermitFailed): told as -32021 with the token's reason and what the permit must be; anything else unchanged.
 */
export function permitRefusal(
  err: unknown,
  args: {
    readonly token: QuotableToken;
    readonly sender: Address;
    readonly paymaster: Address;
    readonly permit: TokenPermit | undefined;
  },
): unknown {
  if (args.permit === undefined || !(err instanceof SimulationFailedError)) return err;
  if (!err.reason.includes('TokenPermitFailed(')) return err;
  const reason = /reason=(0x[0-9a-fA-F]*)/.exec(err.reason)?.[1];
  const said = reason === undefined ? undefined : tokenReason(reason as Hex);
  return new TokenPaymentError(
    `The ${args.token.symbol} permit was refused by the token${said === undefined ? '' : ` (${said})`}: it must be the account's signature of the permitTypedData pm_getPaymasterStubData returns for this operation (Permit of owner ${args.sender}, spender ${args.paymaster}, the value, the token's current nonce, deadline ${PERMIT_DEADLINE}, in the token's EIP-712 domain on this chain)`,
  );
}

/** The token's Error(string), or undefined for any other revert data. */
function tokenReason(data: Hex): string | undefined {
  try {
    const d = decodeErrorResult({ abi: permitFailedAbi, data });
    return d.errorName === 'Error' ? String(d.args[0]).slice(0, 120) : undefined;
  } catch {
    return undefined;
  }
}
