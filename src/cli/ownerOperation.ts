import {
  type Address,
  createPublicClient,
  createWalletClient,
  formatEther,
  formatUnits,
  type Hex,
  http,
  isAddressEqual,
  type LocalAccount,
  type PublicClient,
} from 'viem';
import { patronPaymasterAbi } from '../chain/artifacts.js';
import { ENTRY_POINT_ADDRESSES, ENTRY_POINT_VERSIONS } from '../chain/entryPoints.js';
import { safeTransactionBatch } from '../chain/safeTransactionBatch.js';
import { ValidationError } from '../errors/PatronError.js';
import { addressOption, option, rpcUrlOption } from './cliOptions.js';
import { printResult } from './cliOutput.js';
import type { ChainCommandContext } from './commands.js';
import { explainCallError } from './ownerRevert.js';
import { MISSING_KEY_MESSAGE, transactionKeySource } from './transactionKey.js';

/** A value an owner's call changes, typed so that it prints in its unit. */
export type Field =
  | { readonly kind: 'wei'; readonly value: bigint }
  | { readonly kind: 'address'; readonly value: Address }
  | { readonly kind: 'flag'; readonly value: boolean }
  | { readonly kind: 'seconds'; readonly value: number }
  | { readonly kind: 'count'; readonly value: number }
  /** Unix seconds; 0 is "none". */
  | { readonly kind: 'time'; readonly value: number }
  | { readonly kind: 'units'; readonly value: bigint; readonly decimals: number; readonly symbol: string };

export type State = Readonly<Record<string, Field>>;

/** The paymaster an owner's command acts on, and who calls it. */
export interface OwnerTarget {
  readonly client: PublicClient;
  readonly chainId: number;
  readonly paymaster: Address;
  readonly entryPoint: Address;
  /** "0.6" … "0.9", or "custom" for a v0.6 paymaster pointed at a non-canonical EntryPoint. */
  readonly entryPointVersion: string;
  readonly owner: Address;
  /** The key's address; the owner's on a dry run without a key. */
  readonly from: Address;
}

export interface OwnerOperation<S extends State> {
  readonly functionName: string;
  /** The call's arguments for --json (wei and token amounts as decimal strings). */
  readonly args: Readonly<Record<string, string>>;
  /** What it does, for people: "withdraw 1 ETH of the deposit to 0x…". */
  readonly summary: string;
  readonly data: Hex;
  readonly value: bigint;
  /** The on-chain values the call changes, read now. */
  read(): Promise<S>;
  /** What they would be after the call (for --dry-run; a real run reads them again). */
  predict(before: S): S;
}

function show(f: Field): string {
  switch (f.kind) {
    case 'wei':
      return `${formatEther(f.value)} ETH`;
    case 'address':
    case 'flag':
      return String(f.value);
    case 'seconds':
      return `${f.value} s`;
    case 'count':
      return String(f.value);
    case 'time':
      return f.value === 0 ? 'none' : new Date(f.value * 1000).toISOString();
    case 'units':
      return `${formatUnits(f.value, f.decimals)} ${f.symbol}`;
  }
}

function toJson(state: State): Record<string, string | boolean | number> {
  return Object.fromEntries(
    Object.entries(state).map(([k, f]) => [k, typeof f.value === 'bigint' ? f.value.toString() : f.value]),
  );
}

function versionOf(entryPoint: Address): string {
  return ENTRY_POINT_VERSIONS.find((v) => isAddressEqual(ENTRY_POINT_ADDRESSES[v], entryPoint)) ?? 'custom';
}

async function connect(ctx: ChainCommandContext) {
  const rpcUrl = rpcUrlOption(ctx);
  const paymaster = addressOption(ctx, 'paymaster');
  const client = createPublicClient({ transport: http(rpcUrl) });
  const chainId = await client.getChainId();
  if ((await client.getCode({ address: paymaster })) === undefined)
    throw new ValidationError(`No contract at --paymaster ${paymaster} on chain ${chainId}`);
  const read = <F extends 'owner' | 'entryPoint'>(functionName: F) =>
    client.readContract({ address: paymaster, abi: patronPaymasterAbi, functionName });
  let owner: Address;
  let entryPoint: Address;
  try {
    [owner, entryPoint] = await Promise.all([read('owner'), read('entryPoint')]);
  } catch {
    throw new ValidationError(
      `${paymaster} on chain ${chainId} is not a Patron paymaster (no owner() or entryPoint())`,
    );
  }
  const entryPointVersion = versionOf(entryPoint);
  const given = option(ctx, 'entry-point-version');
  if (given !== undefined && given !== entryPointVersion)
    throw new ValidationError(
      `--entry-point-version ${given} does not match the paymaster's EntryPoint ${entryPoint} (v${entryPointVersion})`,
    );
  return { rpcUrl, client, chainId, paymaster, owner, entryPoint, entryPointVersion };
}

type Connected = Awaited<ReturnType<typeof connect>>;

/** The call as eth_call from the caller: a revert here is decoded before anything is sent. */
async function simulate(c: Connected, from: Address, op: OwnerOperation<State>): Promise<void> {
  if (op.value > 0n) {
    // Nodes differ on whether eth_call checks the balance; this says it plainly either way.
    const balance = await c.client.getBalance({ address: from });
    if (balance < op.value)
      throw new ValidationError(
        `${from} holds ${formatEther(balance)} ETH, less than the ${formatEther(op.value)} ETH ${op.functionName} sends (plus gas)`,
      );
  }
  try {
    await c.client.call({ account: from, to: c.paymaster, data: op.data, value: op.value });
  } catch (err) {
    throw new ValidationError(
      `${op.functionName} on ${c.paymaster} reverts: ${explainCallError({ err, owner: c.owner })}`,
    );
  }
}

async function send(c: Connected, account: LocalAccount, op: OwnerOperation<State>) {
  const wallet = createWalletClient({ account, transport: http(c.rpcUrl) });
  const call = `${op.functionName} on ${c.paymaster}`;
  let hash: Hex;
  try {
    hash = await wallet.sendTransaction({ to: c.paymaster, data: op.data, value: op.value, chain: null });
  } catch (err) {
    throw new ValidationError(`${call} failed: ${explainCallError({ err, owner: c.owner })}`);
  }
  const receipt = await c.client.waitForTransactionReceipt({ hash });
  // Rare after a successful simulation: the state changed in between (another owner's transaction, a block).
  if (receipt.status !== 'success')
    throw new ValidationError(`${call} reverted on chain in tx ${hash} (block ${receipt.blockNumber})`);
  return { hash, blockNumber: receipt.blockNumber };
}

function report<S extends State>(args: {
  ctx: ChainCommandContext;
  c: Connected;
  from: Address;
  op: OwnerOperation<S>;
  before: S;
  after: S;
  sent: { hash: Hex; blockNumber: bigint } | undefined;
  /** A dry run where the owner is a contract (a Safe): the transaction to propose there. */
  ownerIsContract?: boolean;
}): void {
  const { c, op, before, after, sent } = args;
  // What the owner sends, byte for byte: for a hardware wallet, a multisig, or any tool that signs elsewhere.
  const transaction = { to: c.paymaster, value: op.value.toString(), data: op.data };
  // Safe{Wallet}'s Transaction Builder imports this batch file as it is (one transaction).
  const safeBatch =
    sent === undefined && args.ownerIsContract === true
      ? safeTransactionBatch({
          chainId: c.chainId,
          name: `Patron: ${op.functionName}`,
          description: op.summary,
          transaction,
          createdAt: Date.now(),
        })
      : undefined;
  const json = {
    dryRun: sent === undefined,
    chainId: c.chainId,
    paymaster: c.paymaster,
    entryPoint: c.entryPoint,
    entryPointVersion: c.entryPointVersion,
    owner: c.owner,
    from: args.from,
    function: op.functionName,
    args: op.args,
    value: op.value.toString(),
    ...(sent === undefined ? { transaction } : { txHash: sent.hash }),
    ...(safeBatch === undefined ? {} : { safeTransactionBuilder: safeBatch }),
    before: toJson(before),
    after: toJson(after),
  };
  const where = `paymaster ${c.paymaster} (EntryPoint v${c.entryPointVersion}, chain ${c.chainId}) from ${args.from}`;
  const changes = Object.entries(before).map(([k, f]) => {
    const a = after[k];
    return `  ${k.padEnd(18)} ${show(f)}${a === undefined ? '' : ` → ${show(a)}`}`;
  });
  printResult(
    args.ctx.io,
    args.ctx.json,
    json,
    sent === undefined
      ? [
          `Dry run, nothing sent: ${op.summary}`,
          `  ${op.functionName} on ${where} succeeds in simulation`,
          ...changes,
          `  to    ${transaction.to}`,
          `  value ${transaction.value} wei`,
          `  data  ${transaction.data}`,
          ...(safeBatch === undefined
            ? []
            : [
                `  The owner ${c.owner} is a contract (a Safe?): propose this in its Transaction Builder (import as JSON):`,
                JSON.stringify(safeBatch),
              ]),
        ]
      : [
          `Done: ${op.summary} (tx ${sent.hash}, block ${sent.blockNumber})`,
          `  ${op.functionName} on ${where}`,
          ...changes,
        ],
  );
}

/**
 * Runs one owner's call: simulates it from the key's address; with --dry-run prints what would change and
 * stops; else sends it, waits for the receipt and prints the values read again. Every revert becomes one line
 * (ownerRevert.ts) and a non-zero exit.
 */
export async function runOwnerOperation<S extends State>(
  ctx: ChainCommandContext,
  build: (target: OwnerTarget) => Promise<OwnerOperation<S>>,
): Promise<void> {
  const dryRun = ctx.options['dry-run'] === true;
  const c = await connect(ctx);
  const source = transactionKeySource(ctx);
  // A dry run may go without a key: it then simulates as the owner, to plan before the key is at hand.
  if (source === undefined && !dryRun) throw new ValidationError(MISSING_KEY_MESSAGE);
  const account = source === undefined ? undefined : await source.load();
  const from = account?.address ?? c.owner;
  const op = await build({ ...c, from });
  const before = await op.read();
  await simulate(c, from, op);
  if (dryRun || account === undefined) {
    const ownerIsContract = (await c.client.getCode({ address: c.owner })) !== undefined;
    report({ ctx, c, from, op, before, after: op.predict(before), sent: undefined, ownerIsContract });
    return;
  }
  const sent = await send(c, account, op);
  report({ ctx, c, from, op, before, after: await op.read(), sent });
}

/** Identity, so that S is inferred from `read` and then types `predict`'s argument. */
export function ownerOperation<S extends State>(op: OwnerOperation<S>): OwnerOperation<S> {
  return op;
}
