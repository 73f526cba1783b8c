import { type Address, encodeFunctionData, formatUnits, type Hex, parseEventLogs } from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import type { privateKeyToAccount } from 'viem/accounts';
import { devTokenAbi, patronPaymasterAbi } from '../chain/artifacts.js';
import { ValidationError } from '../errors/PatronError.js';
import {
  accountAbi,
  type ChainInfo,
  mined,
  type PaymasterFields,
  type PublicClient,
  printFields,
  rpc,
  signOp,
  submit,
  toWire,
  type Wallet,
} from './demoSteps.js';

/** The fields of an ERC20 fee quote the demo reads (docs/guides/token-mode.md, "Token mode"). */
interface FeeQuote {
  symbol: string;
  decimal: number;
  tokenAddress: Address;
  maxGasFee: number;
  maxGasFeeUSD: number;
  premiumPercentage: number;
  validUntil: number;
}

/**
 * The token mode, on the account the sponsored op deployed: ERC20 quotes for its next op, USDC minted to it (the
 * dev token's open mint stands in for a user who holds some), `approve(paymaster, ceil(maxGasFee × 10^decimal))`
 * batched before the call (what Biconomy's SDK does with a quote), the final data, handleOps, and the charge
 * read from the paymaster's `TokenCharged` event next to the approved maximum.
 */
export async function payInUsdc(args: {
  paymasterUrl: string;
  /** The dApp's token guarantees in the admin API, and the demo's auth headers for it. */
  guarantees: { readonly url: string; readonly headers: Record<string, string> };
  client: PublicClient;
  bundler: Wallet;
  dev: ChainInfo;
  owner: ReturnType<typeof privateKeyToAccount>;
  sender: Address;
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
  print: (line: string) => void;
}) {
  const { client, dev, owner, sender, print } = args;
  const nonce = await client.readContract({
    address: dev.entryPoint,
    abi: entryPoint06Abi,
    functionName: 'getNonce',
    args: [sender, 0n],
  });
  const call = encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [owner.address, 0n, '0x'] });
  const op = {
    sender,
    nonce,
    initCode: '0x' as Hex,
    callData: call,
    maxFeePerGas: args.fees.maxFeePerGas,
    maxPriorityFeePerGas: args.fees.maxPriorityFeePerGas,
  };
  const quoted = await rpc(args.paymasterUrl, 'pm_getFeeQuoteOrData', [
    toWire(op),
    { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { tokenList: [] } },
  ]);
  const quotes = quoted.result as { paymasterAddress: Address; feeQuotes: FeeQuote[] } | undefined;
  if (quotes === undefined) throw new ValidationError(`ERC20 quotes failed: ${quoted.error?.message ?? 'no result'}`);
  print(
    `8. Now the account pays its own gas in a token. pm_getFeeQuoteOrData, mode ERC20, for its next op (nonce ${nonce}):`,
  );
  for (const q of quotes.feeQuotes) {
    print(
      `   ${q.symbol} (${q.decimal} decimals): at most ${q.maxGasFee} ${q.symbol} (≈ ${q.maxGasFeeUSD} USD, premium ${q.premiumPercentage} %), quote valid until ${new Date(q.validUntil * 1000).toISOString()}`,
    );
  }
  const usdc = quotes.feeQuotes.find((q) => q.symbol === 'USDC');
  if (usdc === undefined) throw new ValidationError('the dev chain quotes no USDC');
  const usdcUnits = (n: bigint) => `${formatUnits(n, usdc.decimal)} USDC`;
  // Exactly what @biconomy/account approves for a quote (buildTokenApprovalTransaction).
  const approved = BigInt(Math.ceil(usdc.maxGasFee * 10 ** usdc.decimal));
  await mined(
    client,
    await args.bundler.writeContract({
      chain: null,
      account: args.bundler.account ?? null,
      address: usdc.tokenAddress,
      abi: devTokenAbi,
      functionName: 'mint',
      args: [sender, approved],
    }),
  );
  print(`9. Minted ${usdcUnits(approved)} to ${sender} (the dev token's open mint: a real user would already hold it)`);
  const approve = encodeFunctionData({
    abi: devTokenAbi,
    functionName: 'approve',
    args: [quotes.paymasterAddress, approved],
  });
  const batched = {
    ...op,
    callData: encodeFunctionData({
      abi: accountAbi,
      functionName: 'executeBatch',
      args: [
        [usdc.tokenAddress, owner.address],
        [approve, '0x'],
      ],
    }),
  };
  print(
    `10. The op's call becomes executeBatch: first approve(paymaster, ${approved}) = ceil(maxGasFee × 10^${usdc.decimal}), as Biconomy's SDK does, then the original call`,
  );
  // The approval is batched in the op, so it cannot be prefunded: only the dApp's guarantee can pay for it (mode 2),
  // which is off by default. The demo's dApp turns it on with a small cap for this op, and back as it was after.
  const restore = await guaranteesOn(args.guarantees, print);
  const paid = await rpc(args.paymasterUrl, 'pm_sponsorUserOperation', [
    toWire(batched),
    // The guarantee passes the dApp's webhook as a sponsored op does (the demo's webhook accepts even `num`).
    {
      mode: 'ERC20',
      calculateGasLimits: true,
      tokenInfo: { feeTokenAddress: usdc.tokenAddress },
      sponsorshipInfo: { webhookData: { num: 2 } },
    },
  ]).finally(restore);
  if (paid.result === undefined) throw new ValidationError(`ERC20 data failed: ${paid.error?.message ?? 'no result'}`);
  const r = paid.result as PaymasterFields;
  print(
    `11. pm_sponsorUserOperation with tokenInfo.feeTokenAddress ${usdc.tokenAddress} (USDC) → mode ERC20; the approval rides in the op, so the dApp guarantees the charge (its webhook was asked, webhookData {num: 2})`,
  );
  printFields(r, args.print);
  const signed = await signOp({ op: batched, fields: r, owner, dev });
  const feeReceiver = await client.readContract({
    address: dev.paymaster,
    abi: patronPaymasterAbi,
    functionName: 'feeReceiver',
  });
  const receiverUsdc = () =>
    client.readContract({
      address: usdc.tokenAddress,
      abi: devTokenAbi,
      functionName: 'balanceOf',
      args: [feeReceiver],
    });
  const receiverBefore = await receiverUsdc();
  const { receipt, event } = await submit({ client, bundler: args.bundler, dev, signed: signed.op });
  const [charged] = parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenCharged', logs: receipt.logs });
  print(`12. Signed (userOpHash ${signed.userOpHash}) and sent with handleOps: tx ${receipt.transactionHash}`);
  print(`   block ${receipt.blockNumber}, status ${receipt.status}, gasUsed ${receipt.gasUsed}`);
  print(
    `   UserOperationEvent: success ${String(event?.args.success)}, actualGasCost ${String(event?.args.actualGasCost)} wei (advanced from the paymaster's deposit, ${receipt.depositBefore - receipt.depositAfter} wei)`,
  );
  if (charged === undefined) throw new ValidationError('no TokenCharged event: the token charge did not happen');
  print(
    `   USDC charged: ${usdcUnits(charged.args.charge)} (TokenCharged charge ${charged.args.charge} base units); approved at most ${usdcUnits(approved)}`,
  );
  print(
    `   fee receiver ${feeReceiver}: ${usdcUnits(receiverBefore)} → ${usdcUnits(await receiverUsdc())}; the account keeps ${usdcUnits(approved - charged.args.charge)}`,
  );
}

/** The demo's cap on what the dApp's guarantees may cost: 0.05 ETH a day. */
const DEMO_GUARANTEE_CAP = { limitWei: '50000000000000000', resets: 'daily' } as const;

/**
 * Turns the dApp's token guarantees on through the admin API (what its owner does in the dashboard), printing it;
 * returns what puts the setting back as it was.
 */
async function guaranteesOn(
  at: { readonly url: string; readonly headers: Record<string, string> },
  print: (line: string) => void,
): Promise<() => Promise<void>> {
  const put = async (body: unknown) => {
    const res = await fetch(at.url, { method: 'PUT', headers: at.headers, body: JSON.stringify(body) });
    const json = (await res.json()) as { message?: string; data?: { tokenGuarantees?: unknown } };
    if (!res.ok) throw new ValidationError(`${at.url}: ${res.status} ${json.message ?? ''}`);
    return json.data?.tokenGuarantees;
  };
  const before = (
    (await (await fetch(at.url, { headers: at.headers })).json()) as { data?: { tokenGuarantees?: unknown } }
  ).data?.tokenGuarantees ?? { enabled: false };
  await put({ enabled: true, cap: DEMO_GUARANTEE_CAP });
  print(
    `   The dApp turns its token guarantees on (off by default; cap ${DEMO_GUARANTEE_CAP.limitWei} wei a day): PUT ${new URL(at.url).pathname}`,
  );
  return async () => {
    await put(before);
  };
}
