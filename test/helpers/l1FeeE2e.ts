import assert from 'node:assert/strict';
import { type Address, type Hex, hexToBigInt, hexToBytes, parseEther, toHex } from 'viem';
import { formatUserOperationRequest, type SmartAccount } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import type { EmbeddedChainType } from '../../src/chain/embeddedChain.js';
import type { L1FeeKind } from '../../src/config/l1FeeSettings.js';
import type { UnpackedUserOperationV07 } from '../../src/paymaster/entryPoints/v07/userOperationV07.js';
import { type AltoBundler, startAlto } from './altoBundler.js';
import { type ChainHttpServer, serveChainOverHttp } from './chainHttpServer.js';
import {
  COUNTER_ADDRESS,
  fixtureChainRuntime,
  KEYS,
  type PatronFixture,
  startPatronFixture,
} from './patronPaymasterV06.js';
import { hexWire } from './rpcV07.js';
import { draftOp, simpleAccount, toViemOperation } from './simpleAccountV07.js';
import { createTenant, createTestContext, type Tenant, type TestContext, testConfig } from './testContext.js';

/**
 * The L1-fee bound end to end: the dev chain as an L2 (its oracle installed by `setUp`), Patron serving it with
 * `l1Fee` set and its fees read afresh for every request, and alto started with the same chain type, so the
 * preVerificationGas Patron is asked to sign is what a real bundler computes from the chain's oracle. An op goes
 * the ERC-7677 way on EntryPoint v0.7: Patron's stub, alto's estimate, Patron's data, the account's signature, alto's
 * eth_sendUserOperation (its v2 API, which checks preVerificationGas against its own figure) and handleOps on chain.
 */
export interface L1FeeE2e {
  readonly fx: PatronFixture;
  readonly ctx: TestContext;
  /** A dApp with no limits of its own. */
  readonly tenant: Tenant;
  readonly alto: AltoBundler;
  close(): Promise<void>;
}

const VERSION = '0.7';

export async function startL1FeeE2e(args: {
  readonly chainType: EmbeddedChainType;
  readonly l1Fee: L1FeeKind;
  readonly setUp: (fx: PatronFixture) => Promise<void>;
}): Promise<L1FeeE2e> {
  const fx = await startPatronFixture({ chainType: args.chainType });
  let http: ChainHttpServer | undefined;
  let ctx: TestContext | undefined;
  try {
    await args.setUp(fx);
    const defaults = testConfig();
    ctx = await createTestContext({
      chains: [{ ...fixtureChainRuntime(fx), l1Fee: args.l1Fee }],
      signerKey: hexToBytes(KEYS.signer),
      // Each request reads the block it is made at, and its L1 fee with it: the tests move the fee between requests.
      config: { paymaster: { ...defaults.paymaster, fees: { refreshMs: 0, maxAgeMs: 0 } } },
    });
    const tenant = await createTenant(ctx.deps);
    http = await serveChainOverHttp(fx.chain);
    await fx.client.setBalance({ address: privateKeyToAccount(KEYS.alto).address, value: parseEther('100') });
    const alto = await startAlto({
      rpcUrl: http.url,
      entryPoints: [fx.entryPoints[VERSION]],
      executorKey: KEYS.alto,
      chainType: args.l1Fee === 'opStack' ? 'op-stack' : 'arbitrum',
    });
    const [server, context] = [http, ctx];
    return {
      fx,
      ctx,
      tenant,
      alto,
      async close() {
        await alto.close();
        await server.close();
        await context.close();
        await fx.close();
      },
    };
  } catch (err) {
    await http?.close();
    await ctx?.close();
    await fx.close();
    throw err;
  }
}

/** alto's v2 API: where it checks an op's preVerificationGas and fees against its own figures. */
async function bundler(e2e: L1FeeE2e, method: string, params: unknown[]) {
  const res = await fetch(`${e2e.alto.url}/v2/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { message: string } };
}

export interface PatronAnswer {
  readonly status: number;
  readonly result?: Record<string, unknown>;
  readonly error?: { code: number; message: string; data?: Record<string, string> };
}

/** One ERC-7677 call to Patron's v0.7 paymaster URL, for the dApp whose key is given (the e2e's own by default). */
export async function patron(e2e: L1FeeE2e, method: string, op: UnpackedUserOperationV07, apiKey?: string) {
  const res = await e2e.ctx.app.inject({
    method: 'POST',
    url: `/api/v2/${e2e.fx.chain.chainId}/${apiKey ?? e2e.tenant.apiKey}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: [hexWire({ ...op }), e2e.fx.entryPoints[VERSION], toHex(e2e.fx.chain.chainId), {}],
    }),
  });
  const body = res.json() as Omit<PatronAnswer, 'status'>;
  return { status: res.statusCode, ...body } as PatronAnswer;
}

let nextIndex = 7_000n;

/** A fresh SimpleAccount's op calling the counter, with Patron's stub fields and alto's estimate of its gas. */
export async function estimatedOp(e2e: L1FeeE2e): Promise<{ account: SmartAccount; op: UnpackedUserOperationV07 }> {
  const owner = privateKeyToAccount(KEYS.accountOwner);
  const account = await simpleAccount(e2e.fx, owner, VERSION, nextIndex++);
  const { result: price } = await bundler(e2e, 'pimlico_getUserOperationGasPrice', []);
  const fast = (price as { fast: { maxFeePerGas: Hex; maxPriorityFeePerGas: Hex } }).fast;
  const draft: UnpackedUserOperationV07 = {
    ...(await draftOp(account, [{ to: COUNTER_ADDRESS, data: '0x' }])),
    maxFeePerGas: hexToBigInt(fast.maxFeePerGas),
    maxPriorityFeePerGas: hexToBigInt(fast.maxPriorityFeePerGas),
  };
  const stub = await patron(e2e, 'pm_getPaymasterStubData', draft);
  assert.equal(stub.status, 200, JSON.stringify(stub.error));
  const s = stub.result ?? {};
  const withStub: UnpackedUserOperationV07 = {
    ...draft,
    paymaster: s.paymaster as Address,
    paymasterVerificationGasLimit: BigInt(String(s.paymasterVerificationGasLimit)),
    paymasterPostOpGasLimit: BigInt(String(s.paymasterPostOpGasLimit)),
    paymasterData: s.paymasterData as Hex,
  };
  const estimate = await bundler(e2e, 'eth_estimateUserOperationGas', [
    formatUserOperationRequest(toViemOperation(withStub)),
    e2e.fx.entryPoints[VERSION],
  ]);
  assert.equal(estimate.error, undefined, `${estimate.error?.message}\n${e2e.alto.output()}`);
  const gas = estimate.result as Record<string, Hex>;
  const quantity = (k: string) => hexToBigInt(gas[k] ?? '0x0');
  return {
    account,
    op: {
      ...withStub,
      callGasLimit: quantity('callGasLimit'),
      verificationGasLimit: quantity('verificationGasLimit'),
      preVerificationGas: quantity('preVerificationGas'),
    },
  };
}

/** Patron's final data for the op: the op with it, or the refusal. */
export async function paymasterData(
  e2e: L1FeeE2e,
  op: UnpackedUserOperationV07,
  apiKey?: string,
): Promise<{ readonly signed?: UnpackedUserOperationV07; readonly answer: PatronAnswer }> {
  const answer = await patron(e2e, 'pm_getPaymasterData', op, apiKey);
  const data = answer.result?.paymasterData;
  return typeof data === 'string' ? { signed: { ...op, paymasterData: data as Hex }, answer } : { answer };
}

/** Signed by the account, sent to alto, bundled: alto's receipt of the op (handleOps on the chain). */
export async function sendThroughAlto(
  e2e: L1FeeE2e,
  account: SmartAccount,
  op: UnpackedUserOperationV07,
): Promise<{ readonly success: boolean; readonly actualGasCost: bigint; readonly paymaster: Address }> {
  const signature = await account.signUserOperation(toViemOperation(op));
  const sent = await bundler(e2e, 'eth_sendUserOperation', [
    formatUserOperationRequest(toViemOperation({ ...op, signature })),
    e2e.fx.entryPoints[VERSION],
  ]);
  assert.equal(sent.error, undefined, `${sent.error?.message}\n${e2e.alto.output()}`);
  for (let i = 0; i < 100; i++) {
    const { result } = await bundler(e2e, 'eth_getUserOperationReceipt', [sent.result]);
    if (result !== null && result !== undefined) {
      const r = result as { success: boolean; actualGasCost: Hex; paymaster: Address };
      return { success: r.success, actualGasCost: hexToBigInt(r.actualGasCost), paymaster: r.paymaster };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no receipt for ${String(sent.result)}:\n${e2e.alto.output()}`);
}

export type EstimatedOp = Awaited<ReturnType<typeof estimatedOp>>;

/** An op signed by Patron for its dApp (the e2e's own) and bundled by alto; the paymaster paid for it. */
async function signedAndIncluded(e2e: L1FeeE2e, { account, op }: EstimatedOp): Promise<void> {
  const data = await paymasterData(e2e, op);
  assert.ok(data.signed, JSON.stringify(data.answer));
  const paid = await sendThroughAlto(e2e, account, data.signed);
  assert.equal(paid.success, true);
  assert.equal(paid.paymaster, e2e.fx.paymasters[VERSION]);
}

/**
 * The sequence both L2 kinds are held to: at the calm L1 fee, alto's estimate is signed and included; once the fee
 * spikes (×10), alto asks several times the gas and that is signed and included too; once it is calm again, an op
 * with the spike's preVerificationGas is refused (-32040, `preVerificationGasForSize`, a bound between alto's new
 * figure and the spike's) while alto's own estimate for it is signed and included. `inSpike` runs while the spike
 * lasts, `afterFall` once it is over, with the ops of the moment.
 */
export async function throughSpikeAndFall(
  e2e: L1FeeE2e,
  args: {
    readonly calm: () => Promise<void>;
    readonly spike: () => Promise<void>;
    readonly diagnostic: (message: string) => void;
    readonly inSpike?: (ops: { calm: EstimatedOp; spike: EstimatedOp }) => Promise<void>;
    readonly afterFall?: (after: EstimatedOp) => Promise<void>;
  },
): Promise<void> {
  const calm = await estimatedOp(e2e);
  await signedAndIncluded(e2e, calm);

  await args.spike();
  const spike = await estimatedOp(e2e);
  const [calmGas, spikeGas] = [calm.op.preVerificationGas, spike.op.preVerificationGas];
  args.diagnostic(`alto's preVerificationGas: ${calmGas} calm, ${spikeGas} in the spike`);
  assert.ok(spikeGas > 3n * calmGas, `${calmGas} → ${spikeGas}`);
  await signedAndIncluded(e2e, spike);
  await args.inSpike?.({ calm, spike });

  await args.calm();
  const after = await estimatedOp(e2e);
  const inflated = await paymasterData(e2e, { ...after.op, preVerificationGas: spikeGas });
  assert.equal(inflated.answer.status, 400);
  assert.equal(inflated.answer.error?.code, -32040, JSON.stringify(inflated.answer));
  assert.equal(inflated.answer.error?.data?.rule, 'preVerificationGasForSize');
  const bound = BigInt(inflated.answer.error?.data?.bound ?? '0');
  args.diagnostic(`after the fall: Patron's figure ${inflated.answer.error?.data?.needed}, its bound ${bound}`);
  assert.ok(bound >= after.op.preVerificationGas && bound < spikeGas, `${bound}`);
  await args.afterFall?.(after);
  await signedAndIncluded(e2e, after);
}
