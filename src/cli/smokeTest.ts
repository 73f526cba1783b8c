import { toSimpleSmartAccount } from 'permissionless/accounts';
import {
  type Address,
  concat,
  createPublicClient,
  defineChain,
  formatEther,
  type Hex,
  http,
  type PublicClient,
} from 'viem';
import { getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ValidationError } from '../errors/PatronError.js';
import { checkBundler, estimateGas, sendAndWait } from './smokeTestBundler.js';
import {
  CANONICAL_SIMPLE_ACCOUNT_FACTORY,
  maxCostWei,
  readChainFacts,
  type SmokeVersion,
  simulateHandleOps,
} from './smokeTestChain.js';
import { type ChainFacts, type PatronDeployment, patronDeployment } from './smokeTestChecks.js';
import { askPaymaster, describePaymaster, withPaymaster } from './smokeTestSponsor.js';

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

/** What the first steps established: the deployment under test, the chain client, the facts read on chain. */
interface Target {
  readonly deployment: PatronDeployment & { readonly entryPointVersion: SmokeVersion };
  readonly client: PublicClient;
  readonly factory: Address;
  readonly facts: ChainFacts;
}

/**
 * `patron demo --api-key`: a smoke test of a deployed Patron on a real chain, as a dApp's client would use it (ERC-7677
 * stub, then data, as viem's paymaster client asks), printed step by step and stopped at the first failure with a
 * named cause. The op is a counterfactual SimpleAccount's first (deploying it through the canonical factory), owned
 * by a throwaway key. By default it is only simulated (`eth_call` of handleOps: nothing spent); with a bundler it
 * is sent and its receipt awaited (the paymaster's deposit pays, the account nothing).
 */
export async function runSmokeTest(args: SmokeTestArgs): Promise<void> {
  const target = await preflight(args);
  const { deployment: d, client } = target;
  const version = d.entryPointVersion;
  const owner = privateKeyToAccount(args.ownerKey ?? generatePrivateKey());
  const account = await toSimpleSmartAccount({
    client,
    owner,
    entryPoint: { address: d.entryPoint, version },
    factoryAddress: target.factory,
  });
  const first = await firstOp({ client, account, owner: owner.address, version });
  args.print(
    `3. SimpleAccount v${version} ${first.sender} (owner ${owner.address}, ${args.ownerKey === undefined ? 'a throwaway key' : 'from PATRON_DEMO_OWNER_KEY'}), nonce ${first.nonce}, ${first.deploys ? `not deployed: the op deploys it through ${target.factory}` : 'already deployed'}; call: execute(owner, 0, 0x); maxFeePerGas ${first.op.maxFeePerGas}`,
  );
  const sponsored = await sponsor({ args, target, op: first.op });
  const signed = { ...sponsored.op, signature: await account.signUserOperation(sponsored.op) } as UserOperation;
  const userOpHash = getUserOperationHash({
    chainId: args.chainId,
    entryPointAddress: d.entryPoint,
    entryPointVersion: version,
    userOperation: signed as UserOperation<'0.7'>,
  });
  args.print(`6. Signed by the owner: userOpHash ${userOpHash}`);

  const beneficiary = privateKeyToAccount(generatePrivateKey()).address;
  await simulateHandleOps({
    client,
    version,
    entryPoint: d.entryPoint,
    op: signed,
    beneficiary,
    facts: sponsored.facts,
  });
  args.print(
    `7. eth_call handleOps([op], ${beneficiary}) from that empty address passed: the account ${first.deploys ? 'deploys and ' : ''}accepts its owner's signature, the paymaster accepts Patron's signature and its deposit covers the op`,
  );
  if (args.bundlerUrl === undefined) {
    args.print(
      'OK: sponsorship verified by simulation; nothing was sent and nothing spent (add --bundler URL to send it)',
    );
    return;
  }
  await send({
    args,
    bundlerUrl: args.bundlerUrl,
    entryPoint: d.entryPoint,
    op: signed,
    userOpHash,
    facts: sponsored.facts,
  });
}

/** Steps 1 and 2: the Patron serves the chain with a paymaster for the version; the node is that chain. */
async function preflight(args: SmokeTestArgs): Promise<Target> {
  const { chainId } = args;
  const d = await patronDeployment({ baseUrl: args.baseUrl, chainId, entryPointVersion: args.entryPointVersion });
  const version = d.entryPointVersion;
  if (version === '0.9') {
    throw new ValidationError(
      'the smoke test builds SimpleAccount ops for EntryPoint v0.6, v0.7 and v0.8: pass --entry-point-version',
    );
  }
  args.print(
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
    facts.signers === undefined
      ? 'no signers() to compare'
      : facts.signers.includes(d.signer)
        ? `signers include Patron's signer ${d.signer}`
        : `signers ${facts.signers.join(', ') || '(none)'} do not include Patron's signer ${d.signer}: expect a refusal`;
  args.print(
    `2. Node at ${args.rpcUrl}: chain ${chainId}, block ${block}; EntryPoint, paymaster and factory ${factory} have code; paymaster deposit ${formatEther(facts.depositWei)} ETH, ${signerNote}`,
  );
  if (args.bundlerUrl !== undefined) {
    await checkBundler({ url: args.bundlerUrl, chainId, entryPoint: d.entryPoint });
    args.print(`   bundler at ${args.bundlerUrl}: chain ${chainId}, serves EntryPoint ${d.entryPoint}`);
  }
  return { deployment: { ...d, entryPointVersion: version }, client, factory, facts };
}

/**
 * Steps 4 and 5, as viem's paymaster client asks: the stub, then the data. Without a bundler Patron computes the gas
 * limits (`calculateGasLimits`, as @biconomy/abstractjs asks); with one, the bundler estimates them on the stub.
 */
async function sponsor(p: { args: SmokeTestArgs; target: Target; op: UserOperation }) {
  const { args, target } = p;
  const context = args.webhookData === undefined ? {} : { sponsorshipInfo: { webhookData: args.webhookData } };
  const ask = (method: 'pm_getPaymasterStubData' | 'pm_getPaymasterData', op: UserOperation, extra: object) =>
    askPaymaster({
      baseUrl: args.baseUrl,
      apiKey: args.apiKey,
      chainId: args.chainId,
      entryPoint: target.deployment.entryPoint,
      method,
      op,
      context: { ...context, ...extra },
      facts: target.facts,
    });
  const stub = await ask('pm_getPaymasterStubData', p.op, {});
  let op = withPaymaster({ op: p.op, answer: stub });
  args.print(`4. pm_getPaymasterStubData → ${describePaymaster(stub)}`);
  if (args.bundlerUrl !== undefined) {
    const entryPoint = target.deployment.entryPoint;
    const gas = await estimateGas({ url: args.bundlerUrl, op, entryPoint, facts: target.facts });
    op = { ...op, ...gas };
    args.print(
      `   eth_estimateUserOperationGas → callGasLimit ${gas.callGasLimit}, verificationGasLimit ${gas.verificationGasLimit}, preVerificationGas ${gas.preVerificationGas}`,
    );
  }
  const calculate = args.bundlerUrl === undefined;
  const final = await ask('pm_getPaymasterData', op, calculate ? { calculateGasLimits: true } : {});
  op = withPaymaster({ op, answer: final });
  const facts: ChainFacts = { ...target.facts, maxCostWei: maxCostWei(op) };
  args.print(
    `5. pm_getPaymasterData${calculate ? ' (calculateGasLimits)' : ''} → ${describePaymaster(final)}; callGasLimit ${op.callGasLimit}, verificationGasLimit ${op.verificationGasLimit}, preVerificationGas ${op.preVerificationGas}; at most ${formatEther(facts.maxCostWei ?? 0n)} ETH from the deposit`,
  );
  return { op, facts };
}

/** Step 8 (--bundler): sent, included, and its call executed. */
async function send(p: {
  args: SmokeTestArgs;
  bundlerUrl: string;
  entryPoint: Address;
  op: UserOperation;
  userOpHash: Hex;
  facts: ChainFacts;
}) {
  const r = await sendAndWait({
    url: p.bundlerUrl,
    op: p.op,
    entryPoint: p.entryPoint,
    userOpHash: p.userOpHash,
    timeoutMs: p.args.receiptTimeoutMs,
    facts: p.facts,
  });
  p.args.print(
    `8. eth_sendUserOperation → included in tx ${r.receipt.transactionHash} (block ${r.receipt.blockNumber}): success ${r.success}, actualGasCost ${r.actualGasCost} wei, paid from the paymaster's deposit`,
  );
  if (!r.success) {
    throw new ValidationError(
      `the op was included but its call reverted${r.reason === undefined ? '' : ` (${r.reason})`}: the paymaster still paid ${r.actualGasCost} wei`,
    );
  }
  p.args.print('OK: sponsored op executed on chain');
}

/** The account's next op: its deployment when it has no code yet, one call to its owner with no value or data. */
async function firstOp(args: {
  client: PublicClient;
  account: Awaited<ReturnType<typeof toSimpleSmartAccount>>;
  owner: Address;
  version: SmokeVersion;
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
