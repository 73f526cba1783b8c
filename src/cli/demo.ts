import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPublicClient, http } from 'viem';
import { createBundlerClient, createPaymasterClient, entryPoint07Address } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AccountService } from '../accounts/accountService.js';
import { DEMO_EMAIL } from '../accounts/ensureDemoAccount.js';
import { ValidationError } from '../errors/PatronError.js';
import { depositOf, devChainOf, printReceipt, rpcRefusal } from './demoBundler.js';
import { sponsor7702 } from './demoEip7702.js';
import { type ChainInfo, deleteJson, deploymentOf, fundedWallet, postJson } from './demoSteps.js';
import { payInUsdc } from './demoTokenPayment.js';

/**
 * `patron demo`: the whole sponsored flow against a running Patron with its embedded dev chain and its bundler,
 * printed step by step, every op sent as a dApp sends it: viem's bundler client on the dev bundler, Patron as its
 * ERC-7677 paymaster (viem's paymaster client). A webhook that accepts even `num` values, an op refused (`num: 3`),
 * one sponsored (`num: 2`) for a new SimpleAccount v0.7, and its receipt from the bundler. Then the same account's
 * next op pays its gas in the dev chain's USDC (the token mode): Pimlico-dialect quotes, the approval batched into
 * the op (signed as the dApp's guarantee, which the demo turns on for that op and back off), the receipt and what
 * the paymaster charged. Last, EntryPoint v0.8: a fresh EOA's EIP-7702 op, its authorization sent with it.
 */
export async function runDemo(args: {
  baseUrl: string;
  accounts: AccountService;
  accountRef?: string;
  /** A bundler other than the one /api/chains names for the dev chain. */
  bundlerUrl?: string;
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
  // The demo's ops go through a bundler, as an SDK's do: without one there is nothing honest to show, since
  // sending handleOps itself would demonstrate a path no client takes.
  const bundlerUrl = args.bundlerUrl ?? dev.bundlerUrl ?? undefined;
  if (bundlerUrl === undefined) {
    throw new ValidationError(
      `${baseUrl} runs its dev chain without a bundler (PATRON_DEV_BUNDLER=false, or @pimlico/alto not installed, or it failed: see its log and /readyz): start it with the defaults (npm start), or pass --bundler URL of an ERC-4337 bundler on chain ${dev.chainId}`,
    );
  }
  const owner = await args.accounts.findAccount(args.accountRef ?? DEMO_EMAIL);
  if (owner === undefined)
    throw new ValidationError(`No account ${args.accountRef ?? DEMO_EMAIL} in this data directory`);
  const dapp = (await args.accounts.listDapps(owner.id)).find((d) => d.chainIds.includes(dev.chainId));
  if (dapp === undefined) throw new ValidationError(`Account ${owner.email} has no dApp serving chain ${dev.chainId}`);
  const { token, secret } = await args.accounts.createToken({ accountId: owner.id, name: 'patron demo' });
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
    const client = createPublicClient({
      chain: devChainOf({ chainId: dev.chainId, chainUrl }),
      transport: http(chainUrl),
    });
    const key = privateKeyToAccount(generatePrivateKey());
    const account = await toSimpleSmartAccount({
      client,
      owner: key,
      entryPoint: { address: entryPoint07Address, version: '0.7' },
    });
    print(
      `3. A new SimpleAccount v0.7 ${account.address} (owner ${key.address}, permissionless toSimpleSmartAccount), deployed by its first op`,
    );
    const paymasterUrl = `${baseUrl}/api/v1/${dev.chainId}/${dapp.apiKey}`;
    const bundler = createBundlerClient({
      account,
      client,
      transport: http(bundlerUrl),
      paymaster: createPaymasterClient({ transport: http(paymasterUrl) }),
    });
    print(
      `   viem createBundlerClient on the bundler ${bundlerUrl}, its paymaster viem createPaymasterClient on ${paymasterUrl} (ERC-7677)`,
    );
    const call = { to: key.address, value: 0n, data: '0x' as const };
    const refused = await bundler
      .sendUserOperation({ calls: [call], paymasterContext: { sponsorshipInfo: { webhookData: { num: 3 } } } })
      .then(
        (hash) => `unexpectedly sent: ${hash}`,
        (err: unknown) => rpcRefusal(err),
      );
    print(`4. sendUserOperation with paymasterContext webhookData {num: 3} → pm_getPaymasterStubData ${refused}`);
    const v07 = deploymentOf(dev, '0.7');
    const depositBefore = await depositOf({ client, ...v07 });
    const hash = await bundler.sendUserOperation({
      calls: [call],
      paymasterContext: { sponsorshipInfo: { webhookData: { num: 2 } } },
    });
    print(
      `5. sendUserOperation with paymasterContext webhookData {num: 2}: Patron's stub, the bundler's estimate, Patron's data (pm_getPaymasterData), signed by the owner, eth_sendUserOperation → userOpHash ${hash}`,
    );
    await printReceipt({ bundler, hash, step: '6.', print });
    const depositAfter = await depositOf({ client, ...v07 });
    print(`   paymaster deposit ${depositBefore} → ${depositAfter} wei (paid ${depositBefore - depositAfter})`);

    const guarantees = {
      url: `${baseUrl}/api/admin/dapps/${dapp.id}/token-guarantees`,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    };
    const funder = await fundedWallet(client, chainUrl);
    await payInUsdc({ paymasterUrl, bundlerUrl, guarantees, client, funder, dev, account, print });
    await sponsor7702({
      paymasterUrl,
      bundlerUrl,
      chainUrl,
      dev,
      webhookData: { num: 2 },
      target: account.address,
      print,
    });
  } finally {
    if (webhookId !== undefined)
      await deleteJson(`${baseUrl}/api/v2/public/sdk/webhookParameters`, headers, { webhookId });
    await args.accounts.revokeToken({ accountId: owner.id, tokenId: token.id });
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
