import { type Address, encodeFunctionData, formatUnits, http, maxUint256, parseEventLogs, toHex } from 'viem';
import { createBundlerClient, createPaymasterClient, type SmartAccount } from 'viem/account-abstraction';
import { devTokenAbi } from '../chain/artifacts.js';
import { patronPaymasterV07Abi } from '../chain/deployPatronPaymasterV07.js';
import { ValidationError } from '../errors/PatronError.js';
import { printReceipt } from './demoBundler.js';
import { type ChainInfo, deploymentOf, mined, type PublicClient, rpc, type Wallet } from './demoSteps.js';

/** One token's quote in Pimlico's dialect (docs/guides/token-mode.md, "Pimlico's ERC-20 dialect"), hex quantities. */
interface TokenQuote {
  paymaster: Address;
  token: Address;
  postOpGas: `0x${string}`;
  exchangeRate: `0x${string}`;
}

/**
 * The token mode, on the account the sponsored op deployed, through the same bundler client: Patron's quotes for
 * EntryPoint v0.7, USDC minted to the account (the dev token's open mint stands in for a user who holds some), the
 * op prepared once with a placeholder approval to learn its gas, then sent with `approve(paymaster, its maximum
 * cost in USDC)` batched before the call (what permissionless's ERC-20 flow does) and `{ token }` in the paymaster
 * context; the charge read from the paymaster's `TokenCharged` event next to the approved maximum.
 */
export async function payInUsdc(args: {
  paymasterUrl: string;
  bundlerUrl: string;
  /** The dApp's token guarantees in the admin API, and the demo's auth headers for it. */
  guarantees: { readonly url: string; readonly headers: Record<string, string> };
  client: PublicClient;
  funder: Wallet;
  dev: ChainInfo;
  account: SmartAccount;
  print: (line: string) => void;
}) {
  const { client, dev, account, print } = args;
  const v07 = deploymentOf(dev, '0.7');
  const tokens = (dev.feeTokens ?? []).flatMap((t) =>
    t.usable && t.symbol !== undefined && t.decimals !== undefined
      ? [{ address: t.address, symbol: t.symbol, decimals: t.decimals }]
      : [],
  );
  const quoted = await rpc(args.paymasterUrl, 'pimlico_getTokenQuotes', [
    { tokens: tokens.map((t) => t.address) },
    v07.entryPoint,
    toHex(dev.chainId),
  ]);
  const quotes = (quoted.result as { quotes: TokenQuote[] } | undefined)?.quotes;
  if (quotes === undefined) throw new ValidationError(`token quotes failed: ${quoted.error?.message ?? 'no result'}`);
  print(`7. Now the account pays its own gas in a token. pimlico_getTokenQuotes for EntryPoint v0.7:`);
  for (const q of quotes) {
    const t = tokens.find((x) => x.address.toLowerCase() === q.token.toLowerCase());
    print(
      `   ${t?.symbol ?? q.token} (${String(t?.decimals)} decimals): exchangeRate ${BigInt(q.exchangeRate)} base units per ETH, postOpGas ${BigInt(q.postOpGas)}, paymaster ${q.paymaster}`,
    );
  }
  const usdc = tokens.find((t) => t.symbol === 'USDC');
  const quote = quotes.find((q) => q.token.toLowerCase() === usdc?.address.toLowerCase());
  if (usdc === undefined || quote === undefined) throw new ValidationError('the dev chain quotes no USDC');
  const units = (n: bigint) => `${formatUnits(n, usdc.decimals)} USDC`;
  const grant = 10n * 10n ** BigInt(usdc.decimals);
  await mined(
    client,
    await args.funder.writeContract({
      chain: null,
      account: args.funder.account ?? null,
      address: usdc.address,
      abi: devTokenAbi,
      functionName: 'mint',
      args: [account.address, grant],
    }),
  );
  print(
    `8. Minted ${units(grant)} to ${account.address} (the dev token's open mint: a real user would already hold it)`,
  );

  const bundler = createBundlerClient({
    account,
    client,
    transport: http(args.bundlerUrl),
    paymaster: createPaymasterClient({ transport: http(args.paymasterUrl) }),
    // `token` is the token mode in that token; the guarantee passes the dApp's webhook as a sponsored op does.
    paymasterContext: { token: usdc.address, sponsorshipInfo: { webhookData: { num: 2 } } },
  });
  const approve = (amount: bigint) => ({
    to: usdc.address,
    data: encodeFunctionData({ abi: devTokenAbi, functionName: 'approve', args: [quote.paymaster, amount] }),
  });
  const call = { to: account.address, data: '0x' as const };
  // The approval is batched in the op, so it cannot be prefunded: only the dApp's guarantee can pay for it (mode 2),
  // which is off by default. The demo's dApp turns it on with a small cap for this op, and back as it was after.
  const restore = await guaranteesOn(args.guarantees, print);
  try {
    const prepared = await bundler.prepareUserOperation({ calls: [approve(maxUint256), call] });
    // A v0.7 op has the paymaster's own limits; what the account signs for is every limit at maxFeePerGas.
    const paymasterGas =
      'paymasterPostOpGasLimit' in prepared
        ? (prepared.paymasterVerificationGasLimit ?? 0n) + (prepared.paymasterPostOpGasLimit ?? 0n)
        : 0n;
    const gas =
      prepared.preVerificationGas +
      prepared.verificationGasLimit +
      prepared.callGasLimit +
      paymasterGas +
      BigInt(quote.postOpGas);
    const approved = (gas * prepared.maxFeePerGas * BigInt(quote.exchangeRate)) / 10n ** 18n;
    print(
      `9. The op's calls become [approve(paymaster, ${approved}), the call]: its gas limits (from a first preparation with a placeholder approval) × maxFeePerGas ${prepared.maxFeePerGas} at the quoted rate, as permissionless computes it`,
    );
    const hash = await bundler.sendUserOperation({ calls: [approve(approved), call] });
    print(
      `10. sendUserOperation with paymasterContext {token: USDC} → mode ERC20, the approval riding in the op, so the dApp guarantees the charge (its webhook was asked, webhookData {num: 2}) → userOpHash ${hash}`,
    );
    const feeReceiver = await client.readContract({
      address: v07.paymaster,
      abi: patronPaymasterV07Abi,
      functionName: 'feeReceiver',
    });
    const receiverUsdc = () =>
      client.readContract({ address: usdc.address, abi: devTokenAbi, functionName: 'balanceOf', args: [feeReceiver] });
    const receiverBefore = await receiverUsdc();
    const receipt = await printReceipt({ bundler, hash, step: '11.', print });
    const [charged] = parseEventLogs({ abi: patronPaymasterV07Abi, eventName: 'TokenCharged', logs: receipt.logs });
    if (charged === undefined) throw new ValidationError('no TokenCharged event: the token charge did not happen');
    print(
      `   USDC charged: ${units(charged.args.charge)} (TokenCharged charge ${charged.args.charge} base units); approved at most ${units(approved)}`,
    );
    print(
      `   fee receiver ${feeReceiver}: ${units(receiverBefore)} → ${units(await receiverUsdc())}; the account keeps ${units(grant - charged.args.charge)}`,
    );
  } finally {
    await restore();
  }
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
