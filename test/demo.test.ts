import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { getAddress, type Hex, parseEventLogs } from 'viem';
import { entryPoint08Abi } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { devTokenAbi } from '../src/chain/artifacts.js';
import { DEV_BUNDLER_KEYS } from '../src/chain/buildChains.js';
import { patronPaymasterV07Abi } from '../src/chain/deployPatronPaymasterV07.js';
import { runCli } from '../src/cli/main.js';
import { runDemoAgainst } from './helpers/runDemo.js';
import { createTenant, createTestContext, TEST_MASTER_KEY, testConfig } from './helpers/testContext.js';

test('`patron demo` sends a sponsored op, then a USDC-paid op, then a v0.8 EIP-7702 op through a bundler (viem’s bundler client, Patron its ERC-7677 paymaster)', {
  timeout: 180_000,
}, async () => {
  const base = testConfig();
  const ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } } });
  try {
    const { lines, tenant, bundlerUrl } = await runDemoAgainst(ctx);
    const dev = ctx.deps.devChain;
    assert.ok(dev !== undefined);
    assert.match(
      lines,
      new RegExp(`viem createBundlerClient on the bundler ${bundlerUrl}, its paymaster viem createPaymasterClient`),
    );
    assert.match(lines, /with \{"data":\{"num":3\}\} → false/);
    assert.match(
      lines,
      /4\. sendUserOperation with paymasterContext webhookData \{num: 3\} → pm_getPaymasterStubData error -32010: Sponsorship denied/,
    );
    assert.match(lines, /with \{"data":\{"num":2\}\} → true/);
    // Each op's receipt is the bundler's answer to eth_getUserOperationReceipt, for a userOpHash it was sent.
    const sent = [...lines.matchAll(/→ userOpHash (0x[0-9a-f]{64})/g)].map((m) => m[1] as Hex);
    assert.equal(sent.length, 3, lines);
    assert.equal(
      lines.match(/eth_getUserOperationReceipt from the bundler: included in tx 0x[0-9a-f]{64}/g)?.length,
      3,
    );
    assert.equal(lines.match(/status success/g)?.length, 3, 'the three operations mined');
    assert.equal(lines.match(/UserOperationEvent: success true/g)?.length, 3, 'the three operations executed');
    const paid = /paid (\d+)\)/.exec(lines)?.[1];
    const cost = /actualGasCost (\d+) wei/.exec(lines)?.[1];
    assert.ok(paid !== undefined && paid === cost, 'the deposit dropped by exactly actualGasCost');
    // On chain: each op's UserOperationEvent, sent by the bundler's executor (not by the demo), paid by Patron.
    const executor = privateKeyToAccount(DEV_BUNDLER_KEYS.executor).address;
    const txs = [...lines.matchAll(/included in tx (0x[0-9a-f]{64}) \(bundled by (0x[0-9a-fA-F]{40})\)/g)];
    for (const [i, version] of (['0.7', '0.7', '0.8'] as const).entries()) {
      const [, txHash, from] = txs[i] ?? [];
      assert.ok(txHash !== undefined && from !== undefined, lines);
      assert.equal(getAddress(from), executor, 'the bundler sent the bundle');
      const receipt = await dev.client.getTransactionReceipt({ hash: txHash as Hex });
      assert.equal(getAddress(receipt.from), executor);
      const event = parseEventLogs({ abi: entryPoint08Abi, eventName: 'UserOperationEvent', logs: receipt.logs }).find(
        (e) => e.args.userOpHash === sent[i],
      );
      assert.ok(event !== undefined, `UserOperationEvent ${sent[i]} in ${txHash}`);
      assert.equal(event.args.success, true);
      assert.equal(getAddress(event.args.paymaster), dev.paymasters[version], `Patron's v${version} paymaster paid`);
    }

    // The token-paid op: quotes for both dev tokens, the approval batched, a charge within it.
    assert.match(lines, /7\. .*pimlico_getTokenQuotes for EntryPoint v0\.7/);
    assert.match(lines, /USDC \(6 decimals\): exchangeRate \d+ base units per ETH/);
    assert.match(lines, /PDT \(18 decimals\): exchangeRate \d+ base units per ETH/);
    assert.match(lines, /10\. sendUserOperation with paymasterContext \{token: USDC\} → mode ERC20/);
    // The batched approval is signed as the dApp's guarantee: the demo turned it on for that op, and back off.
    assert.match(lines, /The dApp turns its token guarantees on \(off by default; cap 50000000000000000 wei a day\)/);
    assert.deepEqual((await ctx.deps.accounts.findDappById(tenant.dappId))?.tokenGuarantees, { enabled: false });
    const charge = /TokenCharged charge (\d+) base units/.exec(lines)?.[1];
    const approved = /approve\(paymaster, (\d+)\)/.exec(lines)?.[1];
    assert.ok(charge !== undefined && approved !== undefined, lines);
    assert.ok(BigInt(charge) > 0n && BigInt(charge) <= BigInt(approved), `charge ${charge} ≤ approved ${approved}`);
    // On chain: the v0.7 paymaster's fee receiver of the fresh dev chain holds exactly the printed charge.
    const usdc = dev.tokens.find((t) => t.symbol === 'USDC');
    assert.ok(usdc !== undefined);
    const feeReceiver = await dev.client.readContract({
      address: dev.paymasters['0.7'],
      abi: patronPaymasterV07Abi,
      functionName: 'feeReceiver',
    });
    const received = await dev.client.readContract({
      address: usdc.address,
      abi: devTokenAbi,
      functionName: 'balanceOf',
      args: [feeReceiver],
    });
    assert.equal(received, BigInt(charge), 'the printed charge is what the fee receiver got');

    // The EIP-7702 op on EntryPoint v0.8: the bundle carried the authorization, the EOA is delegated.
    const eoa =
      /12\. EntryPoint v0\.8 and EIP-7702: a new EOA (0x[0-9a-fA-F]{40}) signs an authorization delegating to Simple7702Account (0x[0-9a-fA-F]{40})/.exec(
        lines,
      );
    assert.ok(eoa?.[1] !== undefined && eoa[2] !== undefined, lines);
    const [owner, delegate] = [getAddress(eoa[1]), getAddress(eoa[2])];
    assert.equal(delegate, dev.simple7702Accounts['0.8'], 'the dev chain’s Simple7702Account v0.8');
    assert.match(
      lines,
      new RegExp(`13\\. sendUserOperation with the authorization, naming EntryPoint ${dev.entryPoints['0.8']}`),
    );
    const v08 = lines.slice(lines.indexOf('14. '));
    const cost08 = /actualGasCost (\d+) wei/.exec(v08)?.[1];
    assert.ok(
      cost08 !== undefined && new RegExp(`\\(paid ${cost08}\\)`).test(v08),
      'the v0.8 deposit dropped by actualGasCost',
    );
    assert.match(v08, /: 0xef0100[0-9a-f]{40} \(0xef0100 ‖ Simple7702Account: delegated\)/);
    const bundle7702 = await dev.client.getTransactionReceipt({ hash: txs[2]?.[1] as Hex });
    assert.equal(bundle7702.type, 'eip7702', 'the bundler sent the authorization in a type-4 transaction');
    assert.equal(
      await dev.client.getCode({ address: owner }),
      `0xef0100${delegate.slice(2).toLowerCase()}`,
      'the EOA delegates to Simple7702Account v0.8',
    );
    // The demo cleans up after itself: its webhook and its auth token are gone.
    assert.deepEqual(await ctx.deps.store.webhooks.listByDapp(tenant.dappId), []);
    const tokens = await ctx.deps.accounts.listTokens(tenant.accountId);
    assert.ok(tokens.filter((t) => t.name === 'patron demo').every((t) => t.revokedAt !== null));
  } finally {
    await ctx.close();
  }
});

test('`patron demo` without a bundler stops and says how to get one', async () => {
  const base = testConfig();
  const ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } } });
  try {
    const tenant = await createTenant(ctx.deps);
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    let out = '';
    const code = await runCli({
      argv: ['demo', '--url', url, '--account', tenant.email],
      env: { PATRON_DATA_DIR: '/nonexistent-patron-test', PATRON_DEV_CHAIN: 'false' },
      io: { stdout: (t) => (out += t), stderr: (t) => (out += t) },
      store: ctx.deps.store,
      masterKey: TEST_MASTER_KEY,
    });
    assert.equal(code, 1);
    assert.equal(
      out,
      `patron: ${url} runs its dev chain without a bundler (PATRON_DEV_BUNDLER=false, or @pimlico/alto not installed, or it failed: see its log and /readyz): start it with the defaults (npm start), or pass --bundler URL of an ERC-4337 bundler on chain 31337\n`,
    );
  } finally {
    await ctx.close();
  }
});

test('`patron demo` explains itself when the service has no dev chain', async () => {
  const ctx = await createTestContext();
  try {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    let out = '';
    const code = await runCli({
      argv: ['demo', '--url', url],
      env: { PATRON_DATA_DIR: '/nonexistent-patron-test' },
      io: { stdout: (t) => (out += t), stderr: (t) => (out += t) },
      store: ctx.deps.store,
      masterKey: TEST_MASTER_KEY,
    });
    assert.equal(code, 1);
    assert.equal(
      out,
      `patron: ${url} runs no embedded dev chain: start it with the defaults (npm start), or smoke-test a configured chain with \`patron demo --url URL --api-key KEY --chain ID --rpc NODE_URL\`\n`,
    );
  } finally {
    await ctx.close();
  }
});
