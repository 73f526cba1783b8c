import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type Address, encodeFunctionData, erc20Abi, getAddress, type Hex, parseEther, parseEventLogs } from 'viem';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { ChainRuntime } from '../src/chain/chainRegistry.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import { DEV_PAYMASTER_STAKE, type DevTokenInfo } from '../src/chain/embeddedChain.js';
import { unstakedTokenModeMessage } from '../src/paymaster/token/tokenStake.js';
import { type ChainHttpServer, serveChainOverHttp } from './helpers/chainHttpServer.js';
import {
  buildDeployingOp,
  COUNTER_ADDRESS,
  deployFundedPaymaster,
  KEYS,
  mintToken,
  type PatronFixture,
  signAccount,
  simpleAccountAbi,
  startPatronFixture,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp } from './helpers/rpcFixture.js';
import { TEST_RATE_LIMITS } from './helpers/testContext.js';

/**
 * The token mode's staking requirement (ERC-7562; docs/guides/token-mode.md, "Paying gas in ERC-20") at process level: the real service
 * (`src/main.ts`) on a configured chain, not the embedded one (an in-process EVM served over HTTP on 127.0.0.1),
 * whose paymaster has a deposit but no stake. It starts with a warning naming the paymaster, answers the token mode
 * with -32030 and that same message (the sponsored mode keeps working), and once the owner calls `addStake` and the
 * solvency guard has read the stake again (every second here), it signs the token mode, and the op executes.
 */
let fx: PatronFixture;
let chainServer: ChainHttpServer;
let usdc: DevTokenInfo;
/** A second PatronPaymaster on the chain's EntryPoint v0.6: deposited, never staked. */
let unstaked: Address;
let child: ChildProcess | undefined;
let out = '';
let dataDir: string;

before(async () => {
  fx = await startPatronFixture();
  [usdc] = fx.tokens as [DevTokenInfo];
  unstaked = await deployFundedPaymaster(fx, parseEther('10'));
  chainServer = await serveChainOverHttp(fx.chain);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-stake-'));
});
after(async () => {
  if (child !== undefined && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child?.once('exit', r));
  }
  await chainServer.close();
  await fx.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Starts the service on the configured chain; resolves with its base URL, the demo dApp's API key and auth token. */
async function startService(): Promise<{ base: string; apiKey: string; authToken: string }> {
  child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      PATRON_DEV_CHAIN: 'false',
      // The demo dApp serves chain 31337, which is this configured chain: its API key is printed once.
      PATRON_DEMO: 'true',
      PATRON_DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      PATRON_SIGNER_PRIVATE_KEY: KEYS.signer,
      PATRON_SOLVENCY_INTERVAL_SECONDS: '1',
      PATRON_RATE_LIMITS: TEST_RATE_LIMITS,
      PATRON_CHAINS: JSON.stringify([
        {
          chainId: fx.chain.chainId,
          rpcUrl: chainServer.url,
          paymaster: unstaked,
          entryPoint: fx.entryPoint,
          nativeUsd: { type: 'fixed', usd: '3000' },
          tokens: [{ address: usdc.address, premiumPercentage: '10', price: { type: 'fixed', usd: '1' } }],
        },
      ]),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const deadline = Date.now() + 40_000;
  // The banner (stdout.write) and the "listening" log line (pino's own stream) may come in either order.
  while (!/apiKey {6}pk\./.test(out) || !/"baseUrl":"/.test(out)) {
    assert.equal(child.exitCode, null, `the service exited:\n${out}`);
    assert.ok(Date.now() < deadline, `the service did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const base = /"baseUrl":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out)?.[1];
  const apiKey = /apiKey {6}(pk\.[A-Za-z0-9.]+)/.exec(out)?.[1];
  const authToken = /authToken {3}(\S+)/.exec(out)?.[1];
  assert.ok(base !== undefined && apiKey !== undefined && authToken !== undefined, out);
  return { base, apiKey, authToken };
}

/** The demo dApp's owner turns token guarantees on through the admin API (off by default): its op is mode 2. */
async function enableGuarantees(base: string, authToken: string): Promise<void> {
  const headers = { authorization: `Bearer ${authToken}`, 'content-type': 'application/json' };
  const list = (await (await fetch(`${base}/api/admin/dapps`, { headers })).json()) as {
    data: { dappId: string }[];
  };
  const [dapp] = list.data;
  assert.ok(dapp !== undefined);
  const res = await fetch(`${base}/api/admin/dapps/${dapp.dappId}/token-guarantees`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ enabled: true, cap: { limitWei: (10n ** 18n).toString(), resets: 'daily' } }),
  });
  assert.equal(res.status, 200, await res.text());
}

/** The service's log lines (pino JSON) at warn level. */
const warnings = () =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; check?: string })
    .filter((l) => l.level === 40);

test('an unstaked paymaster on a configured chain: start-up warning, -32030 for the token mode; after addStake and the guard’s next read, the token mode signs and the op executes', {
  timeout: 120_000,
}, async () => {
  const { base, apiKey, authToken } = await startService();
  await enableGuarantees(base, authToken);
  const expected = unstakedTokenModeMessage({
    chainId: fx.chain.chainId,
    paymaster: unstaked,
    entryPoint: fx.entryPoint,
    entryPointVersion: '0.6',
  } as ChainRuntime);
  assert.match(expected, /is not staked in the EntryPoint 0x[0-9a-fA-F]{40} \(v0\.6\) on chain 31337/);
  assert.match(expected, /addStake\(uint32 unstakeDelaySec\)/);
  assert.ok(expected.includes(getAddress(unstaked)));
  const warned = warnings().filter((w) => w.check === 'paymaster_stake');
  assert.deepEqual(
    warned.map((w) => w.msg),
    [expected],
    `one start-up warning for the chain:\n${out}`,
  );

  // A first token op: a new SimpleAccount holding USDC, its approval of the paymaster batched (mode 2).
  const plain = await buildDeployingOp(fx, 7_001n);
  await mintToken(fx, usdc.address, plain.sender, 100n * 10n ** 6n);
  const op = {
    ...plain,
    callData: encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: 'executeBatch',
      args: [
        [usdc.address, COUNTER_ADDRESS],
        [encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [unstaked, 50_000_000n] }), '0x'],
      ],
    }),
  };
  const ask = async (mode: 'ERC20' | 'SPONSORED') => {
    const res = await fetch(`${base}/api/v1/${fx.chain.chainId}/${apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'pm_sponsorUserOperation',
        params: [
          biconomyWireOp(op),
          {
            mode,
            calculateGasLimits: true,
            ...(mode === 'ERC20' ? { tokenInfo: { feeTokenAddress: usdc.address } } : {}),
          },
        ],
      }),
    });
    return {
      status: res.status,
      body: (await res.json()) as {
        result?: Record<string, unknown>;
        error?: { code: number; message: string };
      },
    };
  };
  const refused = await ask('ERC20');
  assert.equal(refused.body.error?.code, -32030, JSON.stringify(refused.body));
  assert.equal(refused.body.error?.message, expected);
  assert.ok(refused.status >= 400 && refused.status < 500, `a refusal, not a ${refused.status}`);
  const sponsored = await ask('SPONSORED');
  assert.ok(sponsored.body.result, `the sponsored mode works unstaked: ${JSON.stringify(sponsored.body)}`);

  // The owner stakes the paymaster; the guard reads the stake again within its interval (1 s here).
  await waitForSuccess(
    fx.client,
    await fx.client.writeContract({
      address: unstaked,
      abi: patronPaymasterAbi,
      functionName: 'addStake',
      args: [DEV_PAYMASTER_STAKE.unstakeDelaySec],
      value: DEV_PAYMASTER_STAKE.wei,
    }),
    'addStake',
  );
  const stakedAt = Date.now();
  let answer = await ask('ERC20');
  while (answer.body.error?.code === -32030 && Date.now() - stakedAt < 10_000) {
    await new Promise((r) => setTimeout(r, 200));
    answer = await ask('ERC20');
  }
  const r = answer.body.result;
  assert.ok(r, `signed after the stake was read: ${JSON.stringify(answer.body)}`);
  assert.ok(Date.now() - stakedAt < 5_000, 'within a few of the guard’s intervals');
  const ready = {
    ...op,
    paymasterAndData: r.paymasterAndData as Hex,
    callGasLimit: BigInt(String(r.callGasLimit)),
    verificationGasLimit: BigInt(String(r.verificationGasLimit)),
    preVerificationGas: BigInt(String(r.preVerificationGas)),
  };
  assert.equal(ready.paymasterAndData.slice(0, 42).toLowerCase(), unstaked.toLowerCase());
  const { receipt, events } = await submitHandleOps(fx, [await signAccount(fx, ready)]);
  assert.equal(events[0]?.args.success, true, 'the token op executed');
  const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs, eventName: 'TokenCharged' });
  assert.ok(charged !== undefined && charged.args.charge > 0n, 'the paymaster charged the account');
});
