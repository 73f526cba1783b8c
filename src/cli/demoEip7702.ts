import { to7702SimpleSmartAccount } from 'permissionless/accounts';
import { type Address, concat, createPublicClient, http } from 'viem';
import { createBundlerClient, createPaymasterClient } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { depositOf, devChainOf, printReceipt } from './demoBundler.js';
import type { ChainInfo } from './demoSteps.js';

/**
 * An EIP-7702 op on EntryPoint v0.8, through the same bundler and paymaster URL: a fresh EOA becomes a
 * Simple7702Account (permissionless `to7702SimpleSmartAccount`, the account dApps use for this) by an authorization
 * it signs itself (neither SDK signs it: the dApp does, as their 7702 guides show) and that travels with its first op
 * as `eip7702Auth`. Patron's stub and data bind the delegate the authorization names; the bundler sends the op in a
 * type-4 transaction carrying that authorization, and the EOA's code is then the delegation designator.
 */
export async function sponsor7702(args: {
  paymasterUrl: string;
  bundlerUrl: string;
  /** The dev chain's JSON-RPC route on the service. */
  chainUrl: string;
  dev: ChainInfo;
  /** What the demo's webhook approves: the policy of the dApp holds for every EntryPoint. */
  webhookData: Record<string, unknown>;
  /** Where the op's one call goes (any address: the op is about who pays, not what it calls). */
  target: Address;
  print: (line: string) => void;
}) {
  const { dev, print } = args;
  // The account's nonce manager keys by client.chain.id, so this client names the chain.
  const client = createPublicClient({
    chain: devChainOf({ chainId: dev.chainId, chainUrl: args.chainUrl }),
    transport: http(args.chainUrl),
  });
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await to7702SimpleSmartAccount({ client, owner });
  const delegate = account.authorization.address;
  const authorization = await owner.signAuthorization({
    address: delegate,
    chainId: dev.chainId,
    nonce: await client.getTransactionCount({ address: owner.address }),
  });
  print(
    `12. EntryPoint v0.8 and EIP-7702: a new EOA ${owner.address} signs an authorization delegating to Simple7702Account ${delegate}; it travels with its first op (eip7702Auth)`,
  );
  const bundler = createBundlerClient({
    account,
    client,
    transport: http(args.bundlerUrl),
    paymaster: createPaymasterClient({ transport: http(args.paymasterUrl) }),
    paymasterContext: { sponsorshipInfo: { webhookData: args.webhookData } },
  });
  const entryPoint = account.entryPoint.address;
  const paymaster = dev.deployments.find((d) => d.entryPointVersion === '0.8')?.paymaster;
  const depositBefore = paymaster === undefined ? 0n : await depositOf({ client, entryPoint, paymaster });
  const hash = await bundler.sendUserOperation({
    calls: [{ to: args.target, value: 0n, data: '0x' }],
    authorization,
  });
  print(
    `13. sendUserOperation with the authorization, naming EntryPoint ${entryPoint}: Patron's stub and data (ERC-7677), signed by the EOA (EIP-712) → userOpHash ${hash}`,
  );
  await printReceipt({ bundler, hash, step: '14.', print });
  if (paymaster !== undefined) {
    const depositAfter = await depositOf({ client, entryPoint, paymaster });
    print(`   paymaster deposit ${depositBefore} → ${depositAfter} wei (paid ${depositBefore - depositAfter})`);
  }
  const code = await client.getCode({ address: owner.address });
  const designator = concat(['0xef0100', delegate]).toLowerCase();
  print(
    `   code of ${owner.address}: ${code ?? '0x'} (${code?.toLowerCase() === designator ? '0xef0100 ‖ Simple7702Account: delegated' : 'not the expected delegation'})`,
  );
}
