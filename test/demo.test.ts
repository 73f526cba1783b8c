import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { getAddress, type Hex, parseEventLogs } from 'viem';
import { entryPoint08Abi } from 'viem/account-abstraction';
import { devTokenAbi, patronPaymasterAbi } from '../src/chain/artifacts.js';
import { runCli } from '../src/cli/main.js';
import { runDemoAgainst } from './helpers/runDemo.js';
import { createTestContext, TEST_MASTER_KEY, testConfig } from './helpers/testContext.js';

test('`patron demo` runs the sponsored flow, then a USDC-paid op, then a v0.8 EIP-7702 op, against a listening Patron with its dev chain', async () => {
  const base = testConfig();
  const ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } } });
  try {
    const { lines, tenant } = await runDemoAgainst(ctx);
    assert.match(lines, /with \{"data":\{"num":3\}\} → false/);
    assert.match(lines, /error -32010: Sponsorship denied/);
    assert.match(lines, /with \{"data":\{"num":2\}\} → true/);
    assert.equal(lines.match(/status success/g)?.length, 3, 'the three operations mined');
    assert.equal(lines.match(/UserOperationEvent: success true/g)?.length, 3, 'the three operations executed');
    const paid = /paid (\d+)\)/.exec(lines)?.[1];
    const cost = /actualGasCost (\d+) wei/.exec(lines)?.[1];
    assert.ok(paid !== undefined && paid === cost, 'the deposit dropped by exactly actualGasCost');

    // The token-paid op: quotes for both dev tokens, the approval batched, a charge within it.
    assert.match(lines, /8\. .*mode ERC20.*nonce 1/);
    assert.match(lines, /USDC \(6 decimals\): at most [\d.]+ USDC/);
    assert.match(lines, /PDT \(18 decimals\): at most [\d.]+ PDT/);
    assert.match(lines, /11\. pm_sponsorUserOperation .* → mode ERC20/);
    // The batched approval is signed as the dApp's guarantee: the demo turned it on for that op, and back off.
    assert.match(lines, /The dApp turns its token guarantees on \(off by default; cap 50000000000000000 wei a day\)/);
    assert.deepEqual((await ctx.deps.accounts.findDappById(tenant.dappId))?.tokenGuarantees, { enabled: false });
    const charge = /TokenCharged charge (\d+) base units/.exec(lines)?.[1];
    const approved = /approve\(paymaster, (\d+)\)/.exec(lines)?.[1];
    assert.ok(charge !== undefined && approved !== undefined, lines);
    assert.ok(BigInt(charge) > 0n && BigInt(charge) <= BigInt(approved), `charge ${charge} ≤ approved ${approved}`);
    // On chain: the fee receiver of the fresh dev chain holds exactly the printed charge.
    const dev = ctx.deps.devChain;
    const usdc = dev?.tokens.find((t) => t.symbol === 'USDC');
    assert.ok(dev !== undefined && usdc !== undefined);
    const feeReceiver = await dev.client.readContract({
      address: dev.paymaster,
      abi: patronPaymasterAbi,
      functionName: 'feeReceiver',
    });
    const received = await dev.client.readContract({
      address: usdc.address,
      abi: devTokenAbi,
      functionName: 'balanceOf',
      args: [feeReceiver],
    });
    assert.equal(received, BigInt(charge), 'the printed charge is what the fee receiver got');
    // The EIP-7702 op on EntryPoint v0.8: stub and data naming it, Patron's v0.8 paymaster paying, the EOA delegated.
    const eoa =
      /13\. EntryPoint v0\.8 and EIP-7702: a new EOA (0x[0-9a-fA-F]{40}) signs an authorization delegating to Simple7702Account (0x[0-9a-fA-F]{40})/.exec(
        lines,
      );
    assert.ok(eoa?.[1] !== undefined && eoa[2] !== undefined, lines);
    const [owner, delegate] = [getAddress(eoa[1]), getAddress(eoa[2])];
    assert.equal(delegate, dev.simple7702Accounts['0.8'], 'the dev chain’s Simple7702Account v0.8');
    assert.match(
      lines,
      new RegExp(
        `14\\. pm_getPaymasterStubData naming EntryPoint ${dev.entryPoints['0.8']} → paymaster ${dev.paymasters['0.8']}`,
      ),
    );
    assert.match(
      lines,
      new RegExp(`15\\. pm_getPaymasterData \\(calculateGasLimits\\) → paymaster ${dev.paymasters['0.8']}`),
    );
    const userOpHash = /16\. Signed by the EOA .*: userOpHash (0x[0-9a-f]{64})/.exec(lines)?.[1] as Hex | undefined;
    const txHash =
      /17\. handleOps by bundler 0x[0-9a-fA-F]{40} with authorizationList \[the EOA's authorization\], transaction type eip7702: tx (0x[0-9a-f]{64})/.exec(
        lines,
      )?.[1] as Hex | undefined;
    assert.ok(userOpHash !== undefined && txHash !== undefined, lines);
    const v08 = lines.slice(lines.indexOf('17. '));
    assert.match(
      v08,
      new RegExp(`UserOperationEvent: success true, paymaster ${dev.paymasters['0.8']}, actualGasCost (\\d+) wei`),
    );
    const cost08 = /actualGasCost (\d+) wei/.exec(v08)?.[1];
    assert.ok(
      cost08 !== undefined && new RegExp(`\\(paid ${cost08}\\)`).test(v08),
      'the v0.8 deposit dropped by actualGasCost',
    );
    assert.match(v08, /: 0xef0100[0-9a-f]{40} \(0xef0100 ‖ Simple7702Account: delegated\)/);
    // On chain: the op is in that transaction, executed, paid by the v0.8 paymaster; the EOA's code is the designator.
    const receipt = await dev.client.getTransactionReceipt({ hash: txHash });
    assert.equal(receipt.type, 'eip7702');
    const events = parseEventLogs({ abi: entryPoint08Abi, eventName: 'UserOperationEvent', logs: receipt.logs });
    const event = events.find((e) => e.args.userOpHash === userOpHash);
    assert.ok(event !== undefined, `UserOperationEvent ${userOpHash} in ${txHash}`);
    assert.equal(event.args.success, true);
    assert.equal(getAddress(event.args.sender), owner);
    assert.equal(getAddress(event.args.paymaster), dev.paymasters['0.8']);
    assert.equal(String(event.args.actualGasCost), cost08);
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
