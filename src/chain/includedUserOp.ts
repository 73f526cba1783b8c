import { type Address, decodeFunctionData, type Hex, type PublicClient, toFunctionSelector } from 'viem';
import { entryPoint06Abi, entryPoint07Abi } from 'viem/account-abstraction';
import type { UserOperationEventLog } from './userOperationEvents.js';

/**
 * The `paymasterAndData` of an included op, read from its transaction (settlement's attribution when two dApps
 * signed one op key: src/settlement/README.md, "Attribution"). The op is found by its sender and nonce in a
 * `handleOps` or `handleAggregatedOps` call, the transaction's own calldata when it calls the EntryPoint, else any
 * such call embedded whole in its calldata (a submitter's wrapper contract), and is taken only when the EntryPoint's
 * own `getUserOpHash` of it, at the op's block, is the event's userOpHash: a decoy op in the calldata has another
 * paymasterAndData, hence another hash. Undefined when no candidate proves to be the op (a wrapper that rebuilds the
 * call, a transaction gone), which the caller reads as unknown.
 */
export async function includedPaymasterAndData(args: {
  readonly client: PublicClient;
  readonly entryPoint: Address;
  /** '0.6' packs the op as UserOperation, the others as PackedUserOperation. */
  readonly packed: boolean;
  readonly event: UserOperationEventLog;
}): Promise<Hex | undefined> {
  const { client, event } = args;
  const tx = await client.getTransaction({ hash: event.transactionHash }).catch(() => undefined);
  if (tx === undefined) return undefined;
  const direct = tx.to?.toLowerCase() === args.entryPoint.toLowerCase();
  for (const data of candidateCalls(tx.input, direct, args.packed)) {
    for (const op of args.packed ? packedOpsOf(data) : opsV06Of(data)) {
      if (op.sender.toLowerCase() !== event.sender.toLowerCase() || op.nonce !== event.nonce) continue;
      const hash = await op
        .hash({ client, entryPoint: args.entryPoint, blockNumber: event.blockNumber })
        .catch(() => undefined);
      if (hash?.toLowerCase() === event.userOpHash.toLowerCase()) return op.paymasterAndData;
    }
  }
  return undefined;
}

/** At most this many embedded calls are tried in one transaction's calldata. */
const MAX_EMBEDDED_CALLS = 8;

const SELECTORS = {
  v06: [
    toFunctionSelector(entryPoint06Abi.find((f) => f.type === 'function' && f.name === 'handleOps') as never),
    toFunctionSelector(entryPoint06Abi.find((f) => f.type === 'function' && f.name === 'handleAggregatedOps') as never),
  ],
  v07: [
    toFunctionSelector(entryPoint07Abi.find((f) => f.type === 'function' && f.name === 'handleOps') as never),
    toFunctionSelector(entryPoint07Abi.find((f) => f.type === 'function' && f.name === 'handleAggregatedOps') as never),
  ],
};

/** The calldata itself when it calls the EntryPoint, then every handleOps call found whole inside it. */
function candidateCalls(input: Hex, direct: boolean, packed: boolean): Hex[] {
  const found: Hex[] = direct ? [input] : [];
  const body = input.toLowerCase();
  for (const selector of packed ? SELECTORS.v07 : SELECTORS.v06) {
    let at = body.indexOf(selector.slice(2), direct ? 10 : 2);
    while (at !== -1 && found.length < MAX_EMBEDDED_CALLS) {
      // A selector starts on a byte boundary (an even hex offset after "0x").
      if (at % 2 === 0) found.push(`0x${body.slice(at)}`);
      at = body.indexOf(selector.slice(2), at + 1);
    }
  }
  return found;
}

interface DecodedOp {
  readonly sender: Address;
  readonly nonce: bigint;
  readonly paymasterAndData: Hex;
  /** The EntryPoint's own getUserOpHash of the op, at a block. */
  hash(at: { client: PublicClient; entryPoint: Address; blockNumber: bigint }): Promise<Hex>;
}

/** A handleOps / handleAggregatedOps call's ops (EntryPoint v0.7+); [] when it does not decode as one. */
function packedOpsOf(data: Hex): DecodedOp[] {
  let call: ReturnType<typeof decodeFunctionData<typeof entryPoint07Abi>>;
  try {
    call = decodeFunctionData({ abi: entryPoint07Abi, data });
  } catch {
    return [];
  }
  const ops =
    call.functionName === 'handleOps'
      ? call.args[0]
      : call.functionName === 'handleAggregatedOps'
        ? call.args[0].flatMap((g) => g.userOps)
        : [];
  return ops.map((op) => ({
    sender: op.sender,
    nonce: op.nonce,
    paymasterAndData: op.paymasterAndData,
    hash: ({ client, entryPoint, blockNumber }) =>
      client.readContract({
        address: entryPoint,
        abi: entryPoint07Abi,
        functionName: 'getUserOpHash',
        args: [op],
        blockNumber,
      }),
  }));
}

/** The same for EntryPoint v0.6's UserOperation. */
function opsV06Of(data: Hex): DecodedOp[] {
  let call: ReturnType<typeof decodeFunctionData<typeof entryPoint06Abi>>;
  try {
    call = decodeFunctionData({ abi: entryPoint06Abi, data });
  } catch {
    return [];
  }
  const ops =
    call.functionName === 'handleOps'
      ? call.args[0]
      : call.functionName === 'handleAggregatedOps'
        ? call.args[0].flatMap((g) => g.userOps)
        : [];
  return ops.map((op) => ({
    sender: op.sender,
    nonce: op.nonce,
    paymasterAndData: op.paymasterAndData,
    hash: ({ client, entryPoint, blockNumber }) =>
      client.readContract({
        address: entryPoint,
        abi: entryPoint06Abi,
        functionName: 'getUserOpHash',
        args: [op],
        blockNumber,
      }),
  }));
}
