import { toSimpleSmartAccount } from 'permissionless/accounts';
import { type Address, concat, createPublicClient, defineChain, formatEther, type Hex, http, toHex } from 'viem';
import { formatUserOperationRequest, getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { z } from 'zod';
import { ValidationError } from '../errors/PatronError.js';
import { checkBundler, estimateGas, sendAndWait } from './smokeTestBundler.js';
import { CANONICAL_SIMPLE_ACCOUNT_FACTORY, maxCostWei, readChainFacts, simulateHandleOps } from './smokeTestChain.js';
import { type ChainFacts, explainFailure, jsonRpc, patronDeployment } from './smokeTestChecks.js';

export interface SmokeTestArgs {
  /** The Patron's base URL. */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly chainId: number;
  /** A node of the chain (JSON-RPC): reads, the account's address, the simulation. */
  readonly rpcUrl: string;
  /** With it the op is sent and its receipt awaited; without it, only simulated. */
  readonly bundlerUrl?: string;
  readonly entryPointVersion?: string;
  readonly factory?: Address;
  /** The account owner's key; a fresh one when absent. */
  readonly ownerKey?: Hex;
  readonly webhookData?: Record<string, unknown>;
  readonly receiptTimeoutMs: number;
  readonly print: (line: string) => void;
}

const quantity = z
  .string()
  .regex(/^0x[0-9a-fA-F]+$/)
  .transform((v) => BigInt(v));
const data = z.string().regex(/^0x([0-9a-fA-F]{2})*$/) as unknown as z.ZodType<Hex>;
/** ERC-7677's answer (v0.6: paymasterAndData; v0.7+: the paymaster's four fields), with computed limits if asked. */
const paymasterAnswer = z.object({
  paymasterAndData: data.optional(),
  paymaster: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .optional(),
  paymasterData: data.optional(),
  paymasterVerificationGasLimit: quantity.optional(),
  paymasterPostOpGasLimit: quantity.optional(),
  callGasLimit: quantity.optional(),
  verificationGasLimit: quantity.optional(),
  preVerificationGas: quantity.optional(),
});

/**
 * `patron demo --api-key`: a smoke test of a deployed Patron on a real chain, as a dApp's client would use it (ERC-7677
 * stub, then data, as viem's paymaster client asks), printed step by step and stopped at the first failure with a
 * named cause. The op is a counterfactual SimpleAccount's first (deploying it through the canonical factory), owned
 * by a throwaway key. By default it is only simulated (`eth_call` of handleOps: nothing spent); with a bundler it
 * is sent and its receipt awaited (the paymaster's deposit pays, the account nothing).
 */
export async function runSmokeTest(args: SmokeTestArgs): Promise<void> {
  const { print, chainId } = args;
  const d = await patronDeployment({ baseUrl: args.baseUrl, chainId, entryPointVersion: args.entryPointVersion });
  const version = d.entryPointVersion;
  if (version === '0.9') {
    throw new ValidationError(
      'the smoke test builds SimpleAccount ops for EntryPoint v0.6, v0.7 and v0.8: pass --entry-point-version',
    );
  }
  print(
    `1. Patron at ${args.baseUrl} answers: serves chains ${d.chainIds.join(', ')}; chain ${chainId} EntryPoint v${version} ${d.entryPoint}, paymaster ${d.paymaster}, signer ${d.signer}`,
  );

  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [args.rpcUrl] } },
  });
  const client = createPublicClient({ chain, transport: http(args.rpcUrl, { timeout: 30_000 }) });
  const factory = args.factory ?? CANONICAL_SIMPLE_ACCOUNT_FACTORY[version];
  const { facts, block } = await readChainFacts({ client, rpcUrl: args.rpcUrl, chainId, deployment: d, factory });
  const signerNote =
    facts.verifyingSigner === undefined
      ? 'no verifyingSigner() to compare'
      : facts.verifyingSigner === d.signer
        ? `verifyingSigner ${facts.verifyingSigner} = Patron's signer`
        : `verifyingSigner ${facts.verifyingSigner} ≠ Patron's signer ${d.signer}: expect AA34`;
  print(
    `2. Node at ${args.rpcUrl}: chain ${chainId}, block ${block}; EntryPoint, paymaster and factory ${factory} have code; paymaster deposit ${formatEther(facts.depositWei)} ETH, ${signerNote}`,
  );
  if (args.bundlerUrl !== undefined) {
    await checkBundler({ url: args.bundlerUrl, chainId, entryPoint: d.entryPoint });
    print(`   bundler at ${args.bundlerUrl}: chain ${chainId}, serves EntryPoint ${d.entryPoint}`);
  }

  const owner = privateKeyToAccount(args.ownerKey ?? generatePrivateKey());
  const account = await toSimpleSmartAccount({
    client,
    owner,
    entryPoint: { address: d.entryPoint, version },
    factoryAddress: factory,
  });
  const op = await firstOp({ client, account, owner: owner.address, version });
  print(
    `3. SimpleAccount v${version} ${op.sender} (owner ${owner.address}, ${args.ownerKey === undefined ? 'a throwaway key' : 'from PATRON_DEMO_OWNER_KEY'}), nonce ${op.nonce}, ${op.deploys ? `not deployed: the op deploys it through ${factory}` : 'already deployed'}; call: execute(owner, 0, 0x); maxFeePerGas ${op.op.maxFeePerGas}`,
  );

  const paymasterUrl = `${args.baseUrl}/api/v1/${chainId}/${args.apiKey}`;
  const context = args.webhookData === undefined ? {} : { sponsorshipInfo: { webhookData: args.webhookData } };
  const ask = async (method: string, userOp: UserOperation, ctx: Record<string, unknown>) => {
    const answer = await jsonRpc({
      url: paymasterUrl,
      method,
      params: [formatUserOperationRequest(userOp), d.entryPoint, toHex(chainId), ctx],
      what: `the Patron at ${args.baseUrl}`,
    });
    const parsed = paymasterAnswer.safeParse(answer.result);
    if (answer.error !== undefined || !parsed.success) {
      throw new ValidationError(`${method} refused: ${patronRefusal(answer.error, facts)}`);
    }
    return parsed.data;
  };
  const stub = await ask('pm_getPaymasterStubData', op.op, context);
  let sponsoredOp = withPaymaster(op.op, stub);
  print(`4. pm_getPaymasterStubData → ${paymasterOf(stub)}`);

  let limits: Record<string, unknown> = { calculateGasLimits: true };
  if (args.bundlerUrl !== undefined) {
    const gas = await estimateGas({ url: args.bundlerUrl, op: sponsoredOp, entryPoint: d.entryPoint, facts });
    sponsoredOp = { ...sponsoredOp, ...gas };
    limits = {};
    print(
      `   eth_estimateUserOperationGas → callGasLimit ${gas.callGasLimit}, verificationGasLimit ${gas.verificationGasLimit}, preVerificationGas ${gas.preVerificationGas}`,
    );
  }
  const final = await ask('pm_getPaymasterData', sponsoredOp, { ...context, ...limits });
  sponsoredOp = withPaymaster(sponsoredOp, final);
  const costFacts: ChainFacts = { ...facts, maxCostWei: maxCostWei(sponsoredOp) };
  print(
    `5. pm_getPaymasterData${args.bundlerUrl === undefined ? ' (calculateGasLimits)' : ''} → ${paymasterOf(final)}; callGasLimit ${sponsoredOp.callGasLimit}, verificationGasLimit ${sponsoredOp.verificationGasLimit}, preVerificationGas ${sponsoredOp.preVerificationGas}; at most ${formatEther(costFacts.maxCostWei ?? 0n)} ETH from the deposit`,
  );

  const signed = { ...sponsoredOp, signature: await account.signUserOperation(sponsoredOp) } as UserOperation;
  const userOpHash = getUserOperationHash({
    chainId,
    entryPointAddress: d.entryPoint,
    entryPointVersion: version,
    userOperation: signed as UserOperation<'0.7'>,
  });
  print(`6. Signed by the owner: userOpHash ${userOpHash}`);

  const beneficiary = privateKeyToAccount(generatePrivateKey()).address;
  await simulateHandleOps({ client, version, entryPoint: d.entryPoint, op: signed, beneficiary, facts: costFacts });
  print(
    `7. eth_call handleOps([op], ${beneficiary}) from that empty address passed: the account deploys and accepts its owner's signature, the paymaster accepts Patron's signature and its deposit covers the op`,
  );
  if (args.bundlerUrl === undefined) {
    print('OK: sponsorship verified by simulation; nothing was sent and nothing spent (add --bundler URL to send it)');
    return;
  }
  const r = await sendAndWait({
    url: args.bundlerUrl,
    op: signed,
    entryPoint: d.entryPoint,
    userOpHash,
    timeoutMs: args.receiptTimeoutMs,
    facts: costFacts,
  });
  print(
    `8. eth_sendUserOperation → included in tx ${r.receipt.transactionHash} (block ${r.receipt.blockNumber}): success ${r.success}, actualGasCost ${r.actualGasCost} wei, paid from the paymaster's deposit`,
  );
  if (!r.success) {
    throw new ValidationError(
      `the op was included but its call reverted${r.reason === undefined ? '' : ` (${r.reason})`}: the paymaster still paid ${r.actualGasCost} wei`,
    );
  }
  print('OK: sponsored op executed on chain');
}

/** The account's next op: its deployment when it has no code yet, one call to its owner with no value or data. */
async function firstOp(args: {
  client: ReturnType<typeof createPublicClient>;
  account: Awaited<ReturnType<typeof toSimpleSmartAccount>>;
  owner: Address;
  version: '0.6' | '0.7' | '0.8';
}): Promise<{ op: UserOperation; sender: Address; nonce: bigint; deploys: boolean }> {
  const { account } = args;
  const sender = await account.getAddress();
  const deploys = !(await account.isDeployed());
  const f = deploys ? await account.getFactoryArgs() : {};
  // Key 0, the sequential nonce a wallet's first op uses (viem's default key is time-based, for parallel ops).
  const nonce = await account.getNonce({ key: 0n });
  const callData = await account.encodeCalls([{ to: args.owner, value: 0n, data: '0x' }]);
  const fees = await args.client.estimateFeesPerGas();
  const common = {
    sender,
    nonce,
    callData,
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    signature: await account.getStubSignature(),
  };
  const op: UserOperation =
    args.version === '0.6'
      ? {
          ...common,
          initCode: f.factory === undefined || f.factoryData === undefined ? '0x' : concat([f.factory, f.factoryData]),
          paymasterAndData: '0x',
        }
      : { ...common, ...(f.factory === undefined ? {} : { factory: f.factory, factoryData: f.factoryData }) };
  return { op, sender, nonce, deploys };
}

function withPaymaster(op: UserOperation, a: z.infer<typeof paymasterAnswer>): UserOperation {
  const limits = {
    ...(a.callGasLimit === undefined ? {} : { callGasLimit: a.callGasLimit }),
    ...(a.verificationGasLimit === undefined ? {} : { verificationGasLimit: a.verificationGasLimit }),
    ...(a.preVerificationGas === undefined ? {} : { preVerificationGas: a.preVerificationGas }),
  };
  if (a.paymasterAndData !== undefined) {
    return { ...(op as UserOperation<'0.6'>), ...limits, paymasterAndData: a.paymasterAndData };
  }
  return {
    ...op,
    ...limits,
    ...(a.paymaster === undefined ? {} : { paymaster: a.paymaster as Address }),
    ...(a.paymasterData === undefined ? {} : { paymasterData: a.paymasterData }),
    ...(a.paymasterVerificationGasLimit === undefined
      ? {}
      : { paymasterVerificationGasLimit: a.paymasterVerificationGasLimit }),
    ...(a.paymasterPostOpGasLimit === undefined ? {} : { paymasterPostOpGasLimit: a.paymasterPostOpGasLimit }),
  } as UserOperation;
}

function paymasterOf(a: z.infer<typeof paymasterAnswer>): string {
  if (a.paymasterAndData !== undefined) return `paymasterAndData ${a.paymasterAndData}`;
  return `paymaster ${a.paymaster ?? '?'}, paymasterData ${a.paymasterData ?? '?'}, paymasterVerificationGasLimit ${a.paymasterVerificationGasLimit ?? '?'}, paymasterPostOpGasLimit ${a.paymasterPostOpGasLimit ?? '?'}`;
}

/** Patron's JSON-RPC error, with what to check for the usual ones (README, "Errors"). */
function patronRefusal(error: { code: number; message: string } | undefined, facts: ChainFacts): string {
  if (error === undefined) return 'an answer without paymaster fields';
  const hints: Record<number, string> = {
    [-32001]: "check --api-key, the dApp's key in its paymaster URL",
    [-32002]: 'check --chain and that the dApp serves it',
    [-32005]: 'rate limited: try again later',
    [-32010]: "the dApp's webhook denied it: pass --webhook-data if it expects some",
    [-32011]: "the dApp's webhook did not answer",
    [-32012]:
      "a sponsorship policy of the dApp denied it: this op deploys a SimpleAccount and calls its owner's address",
    [-32042]: "the paymaster's deposit is too low for Patron to sign: top it up with `patron paymaster deposit`",
  };
  const hint = hints[error.code];
  const text = `error ${error.code}: ${explainFailure(error.message, facts)}`;
  return hint === undefined ? text : `${text} (${hint})`;
}
