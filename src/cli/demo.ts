import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { concat, createPublicClient, encodeFunctionData, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AccountService } from '../accounts/accountService.js';
import { DEMO_EMAIL } from '../accounts/ensureDemoAccount.js';
import { ValidationError } from '../errors/PatronError.js';
import { sponsor7702 } from './demoEip7702.js';
import {
  accountAbi,
  type ChainInfo,
  deleteJson,
  factoryAbi,
  fundedBundler,
  type PaymasterFields,
  postJson,
  printFields,
  rpc,
  signOp,
  submit,
} from './demoSteps.js';
import { payInUsdc } from './demoTokenPayment.js';

/**
 * `patron demo`: the whole sponsored flow against a running Patron with its embedded dev chain, printed step by
 * step: a webhook that accepts even `num` values, a refused request (`num: 3`), a sponsored one (`num: 2`),
 * the op signed as a SimpleAccount owner and submitted with `handleOps`, and the receipt. Then the same
 * account's next op pays its gas in the dev chain's USDC (the token mode): quotes, the approval batched into the
 * op as Biconomy's SDK does it (signed as the dApp's guarantee, which the demo turns on for that op and back off),
 * the final data, `handleOps`, and what the paymaster charged. Last, EntryPoint
 * v0.8 through the same URL: a fresh EOA's EIP-7702 op (ERC-7677 stub, then data), sent with its authorization.
 */
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
    throw new ValidationError(
      `${baseUrl} runs no embedded dev chain: start it with the defaults (npm start), or smoke-test a configured chain with \`patron demo --url URL --api-key KEY --chain ID --rpc NODE_URL\``,
    );
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
    const guarantees = {
      url: `${baseUrl}/api/admin/dapps/${dapp.id}/token-guarantees`,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    };
    await payInUsdc({ paymasterUrl, guarantees, client, bundler, dev, owner, sender, fees, print });
    await sponsor7702({ paymasterUrl, chainUrl, bundler, dev, fees, webhookData: { num: 2 }, target: sender, print });
  } finally {
    if (webhookId !== undefined)
      await deleteJson(`${baseUrl}/api/v2/public/sdk/webhookParameters`, headers, { webhookId });
    await args.accounts.revokeToken({ accountId: account.id, tokenId: token.id });
    await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
  }
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
