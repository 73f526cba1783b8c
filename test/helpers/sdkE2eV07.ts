import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import { createPimlicoClient } from 'permissionless/clients/pimlico';
import {
  type Address,
  type Chain,
  createPublicClient,
  defineChain,
  getAddress,
  type Hex,
  http,
  type PublicClient,
  parseEther,
  parseEventLogs,
} from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { type EntryPointVersion, forEntryPointVersion } from '../../src/chain/chainRegistry.js';
import { type AltoBundler, startAlto } from './altoBundler.js';
import { counterValue, KEYS, type PatronFixture } from './patronPaymasterV06.js';
import { startRpcFixture } from './rpcFixture.js';
import type { Tenant, TestContext } from './testContext.js';

/**
 * End-to-end set-up for today's client SDKs on EntryPoint v0.7 and later: the in-process dev chain of the RPC
 * fixture (every EntryPoint, the accounts the SDKs default to, one Patron paymaster per EntryPoint), the app
 * LISTENING on 127.0.0.1 (the SDKs use their own fetch over real HTTP), one dApp with no webhook, and a real
 * bundler, alto, serving EntryPoints v0.7, v0.8 and v0.9 against the dev chain's JSON-RPC route. The SDKs reach
 * the chain through that same route (`{base}/chain/{chainId}`), as a dApp on `npm start` would.
 *
 * Which paymaster pays for an EntryPoint is asked of the service itself (the chain registry's deployments), so the
 * tests check the paymaster Patron signs for, wherever the fixture put it.
 */
export type SdkEntryPointVersion = Exclude<EntryPointVersion, '0.6'>;

/** The EntryPoints alto is started with. alto 0.0.20 knows v0.9 (its own v0.9 simulation contracts). */
export const ALTO_ENTRY_POINT_VERSIONS: readonly SdkEntryPointVersion[] = ['0.7', '0.8', '0.9'];

export interface SdkE2eV07 {
  readonly fx: PatronFixture;
  readonly ctx: TestContext;
  /** `http://127.0.0.1:<port>` of the listening app. */
  readonly base: string;
  readonly chainId: number;
  /** The dev chain as the SDKs' viem clients know it (its RPC URL is the app's `/chain/{chainId}`). */
  readonly chain: Chain;
  /** A public client of the dev chain over HTTP, what an SDK is given as `client`. */
  readonly publicClient: PublicClient;
  /** A dApp with no webhook: every well-formed op is sponsored. */
  readonly open: Tenant;
  readonly alto: AltoBundler;
  /** Every JSON-RPC call this process made to the app's paymaster URLs or to alto, in order. */
  readonly calls: readonly RecordedRpc[];
  /** `{base}/api/v2/{chainId}/{apiKey}` (the v0.7 SDKs' URL) by default; `v1` for the v0.6 one. */
  paymasterUrl(apiKey: string, api?: 'v1' | 'v2'): string;
  entryPoint(version: SdkEntryPointVersion): Address;
  /** The paymaster the service signs for on that EntryPoint (its chain registry's deployment). */
  paymaster(version: SdkEntryPointVersion): Address;
  /** That paymaster's deposit at its EntryPoint, which sponsored ops draw from. */
  deposit(version: SdkEntryPointVersion): Promise<bigint>;
  /** How often the counter contract (COUNTER_ADDRESS) was called. */
  counter(): Promise<bigint>;
}

/** One JSON-RPC request seen on the wire: what the SDK sent and what it got. */
export interface RecordedRpc {
  readonly target: 'patron' | 'alto';
  readonly method: string;
  readonly params: readonly unknown[];
  readonly status: number;
  readonly response: unknown;
  /** Wall-clock ms when the request left (`Date.now()` before fetch) and when its whole answer was read. */
  readonly sentAt: number;
  readonly answeredAt: number;
}

/**
 * Registers the file's `before`/`after` (the set-up above, started once per file; alto is the slow part) and
 * returns an accessor for it. A file's extra set-up goes in `setUp`: Node 20 starts file-level `before` hooks
 * as they are registered, without waiting for the previous one.
 */
export function useSdkE2eV07(
  options: { setUp?(e2e: SdkE2eV07): Promise<void>; readonly tokens?: boolean } = {},
): () => SdkE2eV07 {
  let started: { e2e: SdkE2eV07; close(): Promise<void> } | undefined;
  before(async () => {
    started = await startSdkE2eV07({ tokens: options.tokens === true });
    await options.setUp?.(started.e2e);
  });
  after(async () => {
    await started?.close();
  });
  return () => {
    assert.ok(started, 'the v0.7 SDK e2e set-up is used before its `before` hook ran');
    return started.e2e;
  };
}

/**
 * The set-up itself, for a script that runs it without node:test (bench/signToInclusion.ts). `tokens`: the dev fee
 * tokens (USDC, PDT) are configured, so the ERC20 mode is served (rpcFixture.ts). `bundleV06`: alto serves the
 * fixture's EntryPoint v0.6 too (v0.6 SDK flows through the same bundler and the same recorder).
 */
export async function startSdkE2eV07(options: {
  readonly tokens: boolean;
  readonly bundleV06?: boolean;
}): Promise<{ e2e: SdkE2eV07; close(): Promise<void> }> {
  const app = await startRpcFixture({ tokens: options.tokens });
  const { fx, ctx, tenant: open } = app;
  let alto: AltoBundler | undefined;
  let recorder: ReturnType<typeof recordRpc> | undefined;
  try {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as AddressInfo;
    const base = `http://127.0.0.1:${port}`;
    const chainId = fx.chain.chainId;
    const rpcUrl = `${base}/chain/${chainId}`;
    const chain = defineChain({
      id: chainId,
      name: 'Patron dev chain',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    });
    const publicClient = createPublicClient({ chain, transport: http(rpcUrl) });

    const runtime = ctx.deps.chains.get(chainId);
    assert.ok(runtime, 'the fixture chain is served');
    const paymasters = new Map<SdkEntryPointVersion, Address>();
    for (const version of ALTO_ENTRY_POINT_VERSIONS) {
      const view = forEntryPointVersion(runtime, version);
      if (view === undefined) continue;
      assert.equal(getAddress(view.entryPoint), getAddress(fx.entryPoints[version]), `v${version} EntryPoint`);
      const code = await fx.client.getCode({ address: view.paymaster });
      assert.ok(code !== undefined && code.length > 2, `Patron's v${version} paymaster has code`);
      paymasters.set(version, getAddress(view.paymaster));
    }

    await fx.client.setBalance({ address: privateKeyToAccount(KEYS.alto).address, value: parseEther('100') });
    alto = await startAlto({
      rpcUrl,
      entryPoints: [
        ...(options.bundleV06 === true ? [fx.entryPoints['0.6']] : []),
        ...ALTO_ENTRY_POINT_VERSIONS.map((v) => fx.entryPoints[v]),
      ],
      executorKey: KEYS.alto,
    });
    recorder = recordRpc({ patron: `${base}/api/`, alto: alto.url });
    const e2e: SdkE2eV07 = {
      fx,
      ctx,
      base,
      chainId,
      chain,
      publicClient,
      open,
      alto,
      calls: recorder.calls,
      paymasterUrl: (apiKey, api = 'v2') => `${base}/api/${api}/${chainId}/${apiKey}`,
      entryPoint: (version) => fx.entryPoints[version],
      paymaster(version) {
        const paymaster = paymasters.get(version);
        assert.ok(
          paymaster,
          `the fixture chain's ChainRuntime lists no Patron paymaster for EntryPoint v${version} (deployments: ${JSON.stringify(runtime.deployments)})`,
        );
        return paymaster;
      },
      deposit(version) {
        return fx.client.readContract({
          address: fx.entryPoints[version],
          abi: entryPoint07Abi,
          functionName: 'balanceOf',
          args: [e2e.paymaster(version)],
        });
      },
      counter: () => counterValue(fx),
    };
    const [altoProcess, rec] = [alto, recorder];
    return {
      e2e,
      async close() {
        rec.restore();
        await altoProcess.close();
        await app.close();
      },
    };
  } catch (err) {
    recorder?.restore();
    await alto?.close();
    await app.close();
    throw err;
  }
}

/**
 * Observes this process's `fetch` calls to Patron's paymaster URLs and to alto (request and answer, unaltered),
 * so a test can state the order an SDK made its calls in. The dev chain's `/chain/` route is left out.
 */
function recordRpc(prefixes: { readonly patron: string; readonly alto: string }): {
  calls: RecordedRpc[];
  restore(): void;
} {
  const realFetch = globalThis.fetch;
  const calls: RecordedRpc[] = [];
  const targetOf = (url: string): RecordedRpc['target'] | undefined => {
    if (url.startsWith(prefixes.patron)) return 'patron';
    if (url === prefixes.alto || url.startsWith(`${prefixes.alto}/`)) return 'alto';
    return undefined;
  };
  globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const sentAt = Date.now();
    const res = await realFetch(input, init);
    const target = targetOf(url);
    if (target === undefined || typeof init?.body !== 'string') return res;
    const text = await res.clone().text();
    const answeredAt = Date.now();
    const sent = JSON.parse(init.body) as unknown;
    const answer = parseOrText(text);
    // viem's http transport sends one request per call unless batching is asked for; a batch is recorded per item.
    const requests = Array.isArray(sent) ? sent : [sent];
    const answers = Array.isArray(answer) ? answer : [answer];
    requests.forEach((req, i) => {
      const { method, params } = (req ?? {}) as { method?: unknown; params?: unknown };
      calls.push({
        target,
        method: String(method),
        params: Array.isArray(params) ? params : [],
        status: res.status,
        response: answers[i],
        sentAt,
        answeredAt,
      });
    });
    return res;
  };
  return {
    calls,
    restore: () => {
      globalThis.fetch = realFetch;
    },
  };
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The fee source permissionless documents for `createSmartAccountClient`: the bundler's own
 * `pimlico_getUserOperationGasPrice` (alto serves it), its `fast` tier, so alto never refuses the op's fees.
 */
export function bundlerFees(e2e: SdkE2eV07) {
  const pimlico = createPimlicoClient({ transport: http(e2e.alto.url) });
  return {
    estimateFeesPerGas: async () => (await pimlico.getUserOperationGasPrice()).fast,
  };
}

export interface PaidOp {
  readonly success: boolean;
  readonly sender: Address;
  readonly paymaster: Address;
  readonly actualGasCost: bigint;
  readonly actualGasUsed: bigint;
  /** The bundle transaction's type, as mined ('eip7702' when it carried an authorization). */
  readonly txType: string;
  /** Who sent the bundle. */
  readonly from: Address;
}

/** The op's UserOperationEvent, read from the mined bundle transaction itself (not from alto's report). */
export async function userOperationEvent(e2e: SdkE2eV07, txHash: Hex, userOpHash: Hex): Promise<PaidOp> {
  const receipt = await e2e.fx.client.getTransactionReceipt({ hash: txHash });
  assert.equal(receipt.status, 'success', 'the bundle transaction succeeded');
  const events = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  const event = events.find((e) => e.args.userOpHash === userOpHash);
  assert.ok(event, `a UserOperationEvent for ${userOpHash} in ${txHash}`);
  return {
    success: event.args.success,
    sender: getAddress(event.args.sender),
    paymaster: getAddress(event.args.paymaster),
    actualGasCost: event.args.actualGasCost,
    actualGasUsed: event.args.actualGasUsed,
    txType: receipt.type,
    from: getAddress(receipt.from),
  };
}

/**
 * What every sponsored op of these tests must show on chain: success, Patron's paymaster of that EntryPoint named
 * in the event and its deposit lowered by exactly actualGasCost, alto (not the test) as the bundle's sender,
 * and the counter call executed (one more than `counterBefore`).
 */
export async function assertPaidByPatron(
  e2e: SdkE2eV07,
  args: {
    readonly version: SdkEntryPointVersion;
    readonly txHash: Hex;
    readonly userOpHash: Hex;
    readonly sender: Address;
    readonly depositBefore: bigint;
    readonly counterBefore: bigint;
  },
): Promise<PaidOp> {
  const paid = await userOperationEvent(e2e, args.txHash, args.userOpHash);
  assert.equal(paid.success, true, `UserOperationEvent.success\n${e2e.alto.output()}`);
  assert.equal(paid.sender, getAddress(args.sender));
  assert.equal(paid.paymaster, e2e.paymaster(args.version), `paid by Patron's v${args.version} paymaster`);
  assert.equal(paid.from, privateKeyToAccount(KEYS.alto).address, 'alto sent the bundle');
  assert.equal(args.depositBefore - (await e2e.deposit(args.version)), paid.actualGasCost, 'deposit - actualGasCost');
  assert.equal(await e2e.counter(), args.counterBefore + 1n, 'the call executed');
  return paid;
}
