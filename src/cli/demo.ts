import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type Address,
  concat,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  formatUnits,
  type Hex,
  http,
  parseAbi,
  parseEther,
  parseEventLogs,
  type TransactionReceipt,
} from 'viem';
import { entryPoint06Abi, getUserOperationHash } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AccountService } from '../accounts/accountService.js';
import { DEMO_EMAIL } from '../accounts/ensureDemoAccount.js';
import { devTokenAbi, patronPaymasterAbi } from '../chain/artifacts.js';
import { ValidationError } from '../errors/PatronError.js';
import type { UserOperationV06 } from '../paymaster/patronPaymasterV06.js';

/**
 * `patron demo`: the whole sponsored flow against a running Patron with its embedded dev chain, printed step by
 * step: a webhook that accepts even `num` values, a refused request (`num: 3`), a sponsored one (`num: 2`),
 * the op signed as a SimpleAccount owner and submitted with `handleOps`, and the receipt. Then the same
 * account's next op pays its gas in the dev chain's USDC (the token mode): quotes, the approval batched into the
 * op as Biconomy's SDK does it, the final data, `handleOps`, and what the paymaster charged.
 */
const factoryAbi = parseAbi([
  'function getAddress(address owner, uint256 salt) view returns (address)',
  'function createAccount(address owner, uint256 salt) returns (address)',
]);
const accountAbi = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function executeBatch(address[] dest, bytes[] func)',
]);

/** The fields of an ERC20 fee quote the demo reads (README, "Token mode"). */
interface FeeQuote {
  symbol: string;
  decimal: number;
  tokenAddress: Address;
  maxGasFee: number;
  maxGasFeeUSD: number;
  premiumPercentage: number;
  validUntil: number;
}

/** The paymaster fields of a sponsored or token-paid result (spec §2.6). */
interface PaymasterFields {
  paymasterAndData: Hex;
  callGasLimit: number;
  verificationGasLimit: number;
  preVerificationGas: string;
}

type Wallet = ReturnType<typeof createWalletClient>;
type PublicClient = ReturnType<typeof createPublicClient>;

interface ChainInfo {
  chainId: number;
  entryPoint: Address;
  paymaster: Address;
  embedded: boolean;
  rpcPath?: string;
  simpleAccountFactory?: Address;
}

export async function runDemo(args: {
  baseUrl: string;
  accounts: AccountService;
  accountRef?: string;
  print: (line: string) => void;
}) {
  const { baseUrl, print } = args;
  const info = (await (await fetch(`${baseUrl}/api/chains`)).json()) as { chains: ChainInfo[] };
  const dev = info.chains.find((c) => c.embedded && c.simpleAccountFactory !== undefined);
  if (dev?.rpcPath === undefined || dev.simpleAccountFactory === undefined) {
    throw new ValidationError(`${baseUrl} runs no embedded dev chain: start it with the defaults (npm start)`);
  }
  const account = await args.accounts.findAccount(args.accountRef ?? DEMO_EMAIL);
  if (account === undefined)
    throw new ValidationError(`No account ${args.accountRef ?? DEMO_EMAIL} in this data directory`);
  const dapp = (await args.accounts.listDapps(account.id)).find((d) => d.chainIds.includes(dev.chainId));
  if (dapp === undefined)
    throw new ValidationError(`Account ${account.email} has no dApp serving chain ${dev.chainId}`);
  const { token, secret } = await args.accounts.createToken({ accountId: account.id, name: 'patron demo' });
  const headers = { authToken: secret, apiKey: dapp.apiKey, 'content-type': 'application/json' };
  const receiver = await startEvenNumberWebhook(print);
  let webhookId: string | undefined;
  try {
    print(`1. Webhook receiver on ${receiver.url}: answers arePoliciesVerified = (data.num is even)`);
    const created = await postJson(`${baseUrl}/api/v2/public/sdk/webhookParameters`, headers, {
      webhookUrl: receiver.url,
      requestType: 'POST',
    });
    webhookId = (created.data as { webhookId: string }).webhookId;
    print(`2. Registered it: ${created.message}, webhookId ${webhookId}`);

    const chainUrl = `${baseUrl}${dev.rpcPath}`;
    const client = createPublicClient({ transport: http(chainUrl) });
    const owner = privateKeyToAccount(generatePrivateKey());
    const sender = await client.readContract({
      address: dev.simpleAccountFactory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args: [owner.address, 0n],
    });
    const block = await client.getBlock();
    const baseFee = block.baseFeePerGas ?? 1_000_000_000n;
    const op = {
      sender,
      nonce: 0n,
      initCode: concat([
        dev.simpleAccountFactory,
        encodeFunctionData({ abi: factoryAbi, functionName: 'createAccount', args: [owner.address, 0n] }),
      ]),
      callData: encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [owner.address, 0n, '0x'] }),
      maxFeePerGas: baseFee * 2n + 1_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    };
    print(`3. A new SimpleAccount ${sender} (owner ${owner.address}), deployed by this op through its initCode`);
    const paymasterUrl = `${baseUrl}/api/v1/${dev.chainId}/${dapp.apiKey}`;
    const wireOp = {
      ...op,
      nonce: '0x0',
      maxFeePerGas: `0x${op.maxFeePerGas.toString(16)}`,
      maxPriorityFeePerGas: `0x${op.maxPriorityFeePerGas.toString(16)}`,
      signature: '0x',
    };
    const denied = await rpc(paymasterUrl, 'pm_getFeeQuoteOrData', [
      wireOp,
      { mode: 'SPONSORED', calculateGasLimits: true, sponsorshipInfo: { webhookData: { num: 3 } } },
    ]);
    print(
      `4. pm_getFeeQuoteOrData with webhookData {num: 3} → ${denied.error ? `error ${denied.error.code}: ${denied.error.message}` : 'unexpectedly sponsored'}`,
    );
    const granted = await rpc(paymasterUrl, 'pm_getFeeQuoteOrData', [
      wireOp,
      { mode: 'SPONSORED', calculateGasLimits: true, sponsorshipInfo: { webhookData: { num: 2 } } },
    ]);
    if (granted.result === undefined)
      throw new ValidationError(`sponsorship failed: ${granted.error?.message ?? 'no result'}`);
    const r = granted.result as PaymasterFields;
    print(
      `5. pm_getFeeQuoteOrData with webhookData {num: 2} → mode ${String((granted.result as { mode?: string }).mode)}`,
    );
    printFields(r, print);
    const signed = await signOp({ op, fields: r, owner, dev });
    print(`6. Signed by the account owner: userOpHash ${signed.userOpHash}`);
    const bundler = await fundedBundler(client, chainUrl);
    const { receipt, event } = await submit({ client, bundler, dev, signed: signed.op });
    print(`7. handleOps by bundler ${bundler.account?.address}: tx ${receipt.transactionHash}`);
    print(`   block ${receipt.blockNumber}, status ${receipt.status}, gasUsed ${receipt.gasUsed}`);
    print(
      `   UserOperationEvent: success ${String(event?.args.success)}, paymaster ${String(event?.args.paymaster)}, actualGasCost ${String(event?.args.actualGasCost)} wei`,
    );
    print(
      `   paymaster deposit ${receipt.depositBefore} → ${receipt.depositAfter} wei (paid ${receipt.depositBefore - receipt.depositAfter})`,
    );

    const fees = { maxFeePerGas: op.maxFeePerGas, maxPriorityFeePerGas: op.maxPriorityFeePerGas };
    await payInUsdc({ paymasterUrl, client, bundler, dev, owner, sender, fees, print });
  } finally {
    if (webhookId !== undefined)
      await deleteJson(`${baseUrl}/api/v2/public/sdk/webhookParameters`, headers, { webhookId });
    await args.accounts.revokeToken({ accountId: account.id, tokenId: token.id });
    await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
  }
}

/**
 * The token mode, on the account the sponsored op deployed: ERC20 quotes for its next op, USDC minted to it (the
 * dev token's open mint stands in for a user who holds some), `approve(paymaster, ceil(maxGasFee × 10^decimal))`
 * batched before the call (what Biconomy's SDK does with a quote), the final data, handleOps, and the charge
 * read from the paymaster's `TokenCharged` event next to the approved maximum.
 */
async function payInUsdc(args: {
  paymasterUrl: string;
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
  const paid = await rpc(args.paymasterUrl, 'pm_sponsorUserOperation', [
    toWire(batched),
    { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { feeTokenAddress: usdc.tokenAddress } },
  ]);
  if (paid.result === undefined) throw new ValidationError(`ERC20 data failed: ${paid.error?.message ?? 'no result'}`);
  const r = paid.result as PaymasterFields;
  print(`11. pm_sponsorUserOperation with tokenInfo.feeTokenAddress ${usdc.tokenAddress} (USDC) → mode ERC20`);
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

function printFields(r: PaymasterFields, print: (line: string) => void) {
  print(
    `   callGasLimit ${r.callGasLimit}, verificationGasLimit ${r.verificationGasLimit}, preVerificationGas ${r.preVerificationGas}`,
  );
  print(`   paymasterAndData ${r.paymasterAndData}`);
}

/** The op as the Biconomy v0.6 SDKs send it: hex nonce and fees, no gas limits (Patron computes them). */
function toWire(op: {
  sender: Address;
  nonce: bigint;
  initCode: Hex;
  callData: Hex;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}) {
  return {
    ...op,
    nonce: `0x${op.nonce.toString(16)}`,
    maxFeePerGas: `0x${op.maxFeePerGas.toString(16)}`,
    maxPriorityFeePerGas: `0x${op.maxPriorityFeePerGas.toString(16)}`,
    signature: '0x',
  };
}

/** The op with the paymaster's fields, signed by the SimpleAccount owner over its v0.6 userOpHash. */
async function signOp(args: {
  op: Omit<
    UserOperationV06,
    'callGasLimit' | 'verificationGasLimit' | 'preVerificationGas' | 'paymasterAndData' | 'signature'
  >;
  fields: PaymasterFields;
  owner: ReturnType<typeof privateKeyToAccount>;
  dev: ChainInfo;
}): Promise<{ op: UserOperationV06; userOpHash: Hex }> {
  const full: UserOperationV06 = {
    ...args.op,
    callGasLimit: BigInt(args.fields.callGasLimit),
    verificationGasLimit: BigInt(args.fields.verificationGasLimit),
    preVerificationGas: BigInt(args.fields.preVerificationGas),
    paymasterAndData: args.fields.paymasterAndData,
    signature: '0x',
  };
  const userOpHash = getUserOperationHash({
    chainId: args.dev.chainId,
    entryPointAddress: args.dev.entryPoint,
    entryPointVersion: '0.6',
    userOperation: full,
  });
  return { op: { ...full, signature: await args.owner.signMessage({ message: { raw: userOpHash } }) }, userOpHash };
}

/** A throwaway bundler EOA, funded through the dev chain's test RPC. */
async function fundedBundler(client: PublicClient, chainUrl: string): Promise<Wallet> {
  const bundler = privateKeyToAccount(generatePrivateKey());
  await client.request({
    method: 'hardhat_setBalance' as 'eth_chainId',
    params: [bundler.address, `0x${parseEther('1').toString(16)}`] as never,
  });
  return createWalletClient({ account: bundler, transport: http(chainUrl) });
}

async function mined(client: PublicClient, hash: Hex): Promise<TransactionReceipt> {
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new ValidationError(`transaction ${hash} reverted`);
  return receipt;
}

/** handleOps with one op; the paymaster's EntryPoint deposit around it and the op's UserOperationEvent. */
async function submit(args: { client: PublicClient; bundler: Wallet; dev: ChainInfo; signed: UserOperationV06 }) {
  const { client, dev, bundler } = args;
  const deposit = () =>
    client.readContract({
      address: dev.entryPoint,
      abi: entryPoint06Abi,
      functionName: 'balanceOf',
      args: [dev.paymaster],
    });
  const depositBefore = await deposit();
  const beneficiary = bundler.account?.address;
  if (beneficiary === undefined) throw new ValidationError('the bundler wallet has no account');
  const hash = await bundler.writeContract({
    chain: null,
    account: bundler.account ?? null,
    address: dev.entryPoint,
    abi: entryPoint06Abi,
    functionName: 'handleOps',
    args: [[args.signed], beneficiary],
  });
  const receipt = await client.waitForTransactionReceipt({ hash });
  const [event] = parseEventLogs({ abi: entryPoint06Abi, eventName: 'UserOperationEvent', logs: receipt.logs });
  return { receipt: { ...receipt, depositBefore, depositAfter: await deposit() }, event };
}

async function startEvenNumberWebhook(print: (line: string) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      const num = (JSON.parse(body || '{}') as { data?: { num?: unknown } }).data?.num;
      const ok = typeof num === 'number' && num % 2 === 0;
      print(
        `   webhook called (${req.headers['webhook-signature'] === undefined ? 'unsigned' : 'signed, Standard Webhooks'}) with ${body} → ${ok}`,
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ arePoliciesVerified: ok }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/verify` };
}

async function postJson(url: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = (await res.json()) as { statusCode: number; message: string; data?: unknown };
  if (!res.ok) throw new ValidationError(`${url}: ${res.status} ${json.message}`);
  return json;
}

async function deleteJson(url: string, headers: Record<string, string>, body: unknown) {
  await fetch(url, { method: 'DELETE', headers, body: JSON.stringify(body) });
}

async function rpc(url: string, method: string, params: unknown[]) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
}
