import { type Address, type Hex, type PublicClient, parseAbiItem, parseEventLogs } from 'viem';

const transferAbi = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const beforeExecutionAbi = parseAbiItem('event BeforeExecution()');

/**
 * What a token-mode op moved in its transaction (the paymaster's contract, contracts/): the prefund taken from the
 * account in validation (the ERC-20 `Transfer` account → paymaster before the EntryPoint's `BeforeExecution`, which
 * ends the validation of every op of the bundle), and the refund sent back in its postOp (`Transfer` paymaster →
 * account between the previous op's `UserOperationEvent` of the transaction and its own). One receipt read.
 */
export async function tokenTransfersOfOp(args: {
  readonly client: PublicClient;
  readonly entryPoint: Address;
  readonly paymaster: Address;
  readonly token: Address;
  readonly account: Address;
  readonly transactionHash: Hex;
  /** The op's own UserOperationEvent, and the previous one of the transaction (undefined: it is the first). */
  readonly opLogIndex: number;
  readonly previousOpLogIndex: number | undefined;
}): Promise<{ readonly prefunded: bigint; readonly refunded: bigint }> {
  const receipt = await args.client.getTransactionReceipt({ hash: args.transactionHash });
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const validationEnd =
    parseEventLogs({ abi: [beforeExecutionAbi], logs: receipt.logs }).find((l) => same(l.address, args.entryPoint))
      ?.logIndex ?? args.opLogIndex;
  let prefunded = 0n;
  let refunded = 0n;
  for (const l of parseEventLogs({ abi: [transferAbi], logs: receipt.logs, strict: false })) {
    const { from, to, value } = l.args;
    if (!same(l.address, args.token) || from === undefined || to === undefined || value === undefined) continue;
    if (same(from, args.account) && same(to, args.paymaster) && l.logIndex < validationEnd) prefunded += value;
    if (
      same(from, args.paymaster) &&
      same(to, args.account) &&
      l.logIndex < args.opLogIndex &&
      (args.previousOpLogIndex === undefined || l.logIndex > args.previousOpLogIndex)
    ) {
      refunded += value;
    }
  }
  return { prefunded, refunded };
}
