import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import { type Hex, isHex, type Log } from 'viem';
import {
  TOKEN_PAYMASTER_AND_DATA_LENGTH,
  type UserOperationV06,
} from '../../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import {
  buildDeployingOp,
  counterValue,
  type PatronFixture,
  paymasterDeposit,
  signAccount,
  submitHandleOps,
} from './patronPaymasterV06.js';
import { startRpcFixture } from './rpcFixture.js';
import { createTenant, type Tenant, type TestContext, WEBHOOK_PATH, webhookHeaders } from './testContext.js';
import { answer, type Receiver, startReceiver } from './webhookReceiver.js';

/**
 * End-to-end setup for the real client SDKs: the in-process chain (EntryPoint v0.6, PatronPaymaster,
 * SimpleAccountFactory from @account-abstraction/contracts@0.6.0, the dev fee tokens USDC and PDT at their
 * fixed dev prices, so the ERC20 mode is served too), the app LISTENING on 127.0.0.1 (the SDKs
 * talk to it over real HTTP with their own fetch), three dApps (no webhook; a webhook that refuses
 * everything; a webhook that accepts even `num` only) whose webhooks are registered through the public webhook
 * API over HTTP, and helpers to run the signed op with `handleOps` and check who paid.
 */
export const DENIAL_MESSAGE = "Sponsorship denied: the dApp's webhook did not approve this user operation";
export const SPONSORED_PAYMASTER_AND_DATA_HEX_LENGTH = 2 + 98 * 2;
export const TOKEN_PAYMASTER_AND_DATA_HEX_LENGTH = 2 + TOKEN_PAYMASTER_AND_DATA_LENGTH * 2;

export interface SdkE2e {
  readonly fx: PatronFixture;
  readonly ctx: TestContext;
  /** `http://127.0.0.1:<port>` of the listening app. */
  readonly base: string;
  /** A dApp with no webhook: every well-formed op is sponsored. */
  readonly open: Tenant;
  /** A dApp whose webhook answers `{"arePoliciesVerified": false}` to everything. */
  readonly denying: Tenant;
  /** A dApp whose webhook approves when `webhookData.num` is an even number. */
  readonly even: Tenant;
  /** The one receiver behind both webhooks (`/deny`, `/even`). */
  readonly receiver: Receiver;
  /** `{base}/api/v1/{chainId}/{apiKey}`: the URL every EntryPoint v0.6 SDK is configured with. */
  paymasterUrl(tenant: Tenant): string;
  /** A fresh SimpleAccount (new CREATE2 salt) each call, so tests never share a sender. */
  nextOp(): Promise<UserOperationV06>;
  close(): Promise<void>;
}

export async function startSdkE2e(): Promise<SdkE2e> {
  const app = await startRpcFixture({ tokens: true });
  const { fx, ctx, tenant: open } = app;
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;

  const receiver = await startReceiver((req, res) => {
    if (req.url.startsWith('/deny')) return answer({ arePoliciesVerified: false })(req, res);
    const data = (JSON.parse(req.body || '{}') as { data?: { num?: unknown } }).data ?? {};
    return answer({ arePoliciesVerified: typeof data.num === 'number' && data.num % 2 === 0 })(req, res);
  });
  const [denying, even] = await Promise.all([createTenant(ctx.deps), createTenant(ctx.deps)]);
  await registerWebhook(base, denying, receiver.url('/deny'));
  await registerWebhook(base, even, receiver.url('/even'));

  let salt = 0n;
  return {
    fx,
    ctx,
    base,
    open,
    denying,
    even,
    receiver,
    paymasterUrl: (tenant) => `${base}/api/v1/${fx.chain.chainId}/${tenant.apiKey}`,
    nextOp: () => {
      salt += 1n;
      return buildDeployingOp(fx, salt);
    },
    async close() {
      await receiver.close();
      await app.close();
    },
  };
}

/** The started set-up as the e2e files use it, with the SDKs' paymaster calls recorded. */
export interface SdkE2eSuite extends Omit<SdkE2e, 'close'> {
  /** Every call an SDK made to a paymaster URL, in order (see recordPaymasterFetches). */
  readonly calls: readonly RecordedCall[];
  /** The last of `calls`, checked to be a JSON-RPC request carrying a userOp. */
  lastCall(): SentRpc;
  /** The stubbed Biconomy error catalogue; only with `{ errorCatalogue: true }`. */
  readonly catalogue: ErrorCatalogueStub;
}

/**
 * Registers the file's `before`/`after`: starts the set-up (startSdkE2e), stubs the Biconomy error catalogue
 * when `errorCatalogue` is set (the `@biconomy/account` files), records the paymaster calls, runs the file's
 * own `setUp` on it, and undoes all of it afterwards. The returned object reads the started set-up from inside
 * tests. A file's extra set-up goes in `setUp`, not in a second top-level `before`: Node 20 starts file-level
 * `before` hooks as they are registered, without waiting for the previous one.
 */
export function useSdkE2e(
  options: { readonly errorCatalogue?: boolean; setUp?(e2e: SdkE2eSuite): Promise<void> } = {},
): SdkE2eSuite {
  let started:
    | { e2e: SdkE2e; wire: ReturnType<typeof recordPaymasterFetches>; catalogue: ErrorCatalogueStub | undefined }
    | undefined;
  const state = () => {
    assert.ok(started, 'the SDK e2e set-up is used before its `before` hook ran');
    return started;
  };
  const suite: SdkE2eSuite = {
    get fx() {
      return state().e2e.fx;
    },
    get ctx() {
      return state().e2e.ctx;
    },
    get base() {
      return state().e2e.base;
    },
    get open() {
      return state().e2e.open;
    },
    get denying() {
      return state().e2e.denying;
    },
    get even() {
      return state().e2e.even;
    },
    get receiver() {
      return state().e2e.receiver;
    },
    paymasterUrl: (tenant) => state().e2e.paymasterUrl(tenant),
    nextOp: () => state().e2e.nextOp(),
    get calls() {
      return state().wire.calls;
    },
    lastCall: () => lastSent(state().wire.calls),
    get catalogue() {
      const { catalogue } = state();
      assert.ok(catalogue, 'useSdkE2e({ errorCatalogue: true }) stubs the catalogue');
      return catalogue;
    },
  };
  before(async () => {
    const e2e = await startSdkE2e();
    const catalogue = options.errorCatalogue ? stubErrorCatalogue() : undefined;
    started = { e2e, catalogue, wire: recordPaymasterFetches(e2e.base) };
    await options.setUp?.(suite);
  });
  after(async () => {
    started?.wire.restore();
    started?.catalogue?.restore();
    await started?.e2e.close();
  });
  return suite;
}

/** `POST /api/v2/public/sdk/webhookParameters` over real HTTP, as a dApp's backend registers its webhook. */
async function registerWebhook(base: string, tenant: Tenant, webhookUrl: string): Promise<string> {
  const res = await fetch(`${base}${WEBHOOK_PATH}`, {
    method: 'POST',
    headers: { ...webhookHeaders(tenant), 'content-type': 'application/json' },
    body: JSON.stringify({ webhookUrl, requestType: 'POST' }),
  });
  const body = (await res.json()) as { data?: { webhookId?: unknown } };
  assert.equal(res.status, 200, JSON.stringify(body));
  const id = body.data?.webhookId;
  assert.equal(typeof id, 'string');
  return String(id);
}

/** The sponsored fields as an SDK hands them back (numbers, decimal strings, hex, bigint: whatever it chose). */
export interface SdkSponsoredFields {
  readonly paymasterAndData?: unknown;
  readonly callGasLimit?: unknown;
  readonly verificationGasLimit?: unknown;
  readonly preVerificationGas?: unknown;
}

/** What a bundler/SDK does with such a value: `BigInt()` it; anything BigInt cannot take fails the test. */
function toBigInt(field: string, v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' || typeof v === 'string') return BigInt(v);
  return assert.fail(`${field}: expected a number, string or bigint, got ${JSON.stringify(v)}`);
}

/**
 * Puts the SDK's answer into the op unchanged (no re-encoding beyond `BigInt()`). `hexLength` is the expected
 * length of `paymasterAndData` as hex: the sponsored mode's by default, TOKEN_PAYMASTER_AND_DATA_HEX_LENGTH for
 * the ERC20 mode.
 */
export function applySdkFields(
  op: UserOperationV06,
  r: SdkSponsoredFields,
  hexLength = SPONSORED_PAYMASTER_AND_DATA_HEX_LENGTH,
): UserOperationV06 {
  const pnd = r.paymasterAndData;
  assert.ok(typeof pnd === 'string' && isHex(pnd), `paymasterAndData: expected hex, got ${JSON.stringify(pnd)}`);
  assert.equal(pnd.length, hexLength);
  return {
    ...op,
    paymasterAndData: pnd,
    callGasLimit: toBigInt('callGasLimit', r.callGasLimit),
    verificationGasLimit: toBigInt('verificationGasLimit', r.verificationGasLimit),
    preVerificationGas: toBigInt('preVerificationGas', r.preVerificationGas),
  };
}

export interface OnChainResult {
  readonly actualGasCost: bigint;
  readonly actualGasUsed: bigint;
  /** Every log of the handleOps transaction (the token mode's `TokenCharged` is among them). */
  readonly logs: readonly Log[];
}

/**
 * Signs the op as the SimpleAccount owner, submits it with `handleOps` from the bundler EOA and checks the
 * outcome: `UserOperationEvent.success`, our paymaster named in it, its EntryPoint deposit lowered by exactly
 * `actualGasCost`, the account deployed and the counter call executed. A bad `paymasterAndData` makes
 * `handleOps` revert (FailedOp AA3x), which throws here. Holds for both modes: in the ERC20 mode the deposit
 * pays the gas too, and the paymaster's postOp takes the token from the account.
 */
export async function assertSponsoredOnChain(fx: PatronFixture, op: UserOperationV06): Promise<OnChainResult> {
  const signed = await signAccount(fx, op);
  const deposit = () => paymasterDeposit(fx);
  const counter = () => counterValue(fx);
  const depositBefore = await deposit();
  const counterBefore = await counter();
  assert.equal(await fx.client.getCode({ address: op.sender }), undefined, 'the account is not deployed yet');

  const { receipt, events } = await submitHandleOps(fx, [signed]);
  assert.equal(receipt.status, 'success');
  assert.equal(events.length, 1, 'one UserOperationEvent');
  const [event] = events;
  assert.ok(event);
  assert.equal(event.args.success, true, 'UserOperationEvent.success');
  assert.equal(event.args.sender.toLowerCase(), op.sender.toLowerCase());
  assert.equal(event.args.paymaster.toLowerCase(), fx.paymaster.toLowerCase(), 'paid by our paymaster');
  assert.equal(depositBefore - (await deposit()), event.args.actualGasCost, 'deposit dropped by actualGasCost');
  assert.notEqual(await fx.client.getCode({ address: op.sender }), undefined, 'the account was deployed');
  assert.equal(await counter(), counterBefore + 1n, 'the call was executed');
  return { actualGasCost: event.args.actualGasCost, actualGasUsed: event.args.actualGasUsed, logs: receipt.logs };
}

/** The webhook requests that reached `path` since `from` (an index into `receiver.requests`). */
export function webhookBodies(receiver: Receiver, path: string, from: number): unknown[] {
  return receiver.requests
    .slice(from)
    .filter((r) => r.url.startsWith(path))
    .map((r) => JSON.parse(r.body) as unknown);
}

export interface RecordedCall {
  readonly url: string;
  readonly body: unknown;
  readonly status: number;
  readonly response: unknown;
}

/**
 * Observes the SDKs' own `fetch` calls to the paymaster URLs (request body as sent, status and body as
 * answered) without altering them, so each test can state what the SDK put on the wire.
 */
export function recordPaymasterFetches(base: string): { calls: RecordedCall[]; restore(): void } {
  const realFetch = globalThis.fetch;
  const calls: RecordedCall[] = [];
  globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const res = await realFetch(input, init);
    if (!url.startsWith(`${base}/api/v1/`)) return res;
    const text = await res.clone().text();
    const sent = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    calls.push({
      url,
      body: sent,
      status: res.status,
      response: text === '' ? undefined : (JSON.parse(text) as unknown),
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

/** A recorded JSON-RPC request as the SDK sent it, checked to have the `[userOp, second, ...]` shape. */
export interface SentRpc {
  readonly id: unknown;
  readonly method: string;
  readonly userOp: Record<string, unknown>;
  readonly params: readonly unknown[];
  readonly status: number;
  readonly response: unknown;
}

/** The last request an SDK sent to a paymaster URL, with Patron's answer. */
export function lastSent(calls: readonly RecordedCall[]): SentRpc {
  const call = calls.at(-1);
  assert.ok(call, 'the SDK called the paymaster URL');
  const body = call.body as { id?: unknown; method?: unknown; params?: unknown } | undefined;
  assert.equal(typeof body?.method, 'string');
  const params = body?.params;
  assert.ok(Array.isArray(params) && typeof params[0] === 'object' && params[0] !== null, 'params[0] is the userOp');
  return {
    id: body?.id,
    method: String(body?.method),
    userOp: params[0] as Record<string, unknown>,
    params,
    status: call.status,
    response: call.response,
  };
}

/** `0x`-hex of a quantity, as the Biconomy SDKs send nonce and fees (`toHex`). */
export const hex = (n: bigint): Hex => `0x${n.toString(16)}`;

const ERRORS_CATALOGUE = 'https://raw.githubusercontent.com/bcnmy/aa-errors/main/docs/errors.json';

/**
 * `@biconomy/account` 4.x words a non-2xx paymaster answer with `getAAError`, which first downloads Biconomy's
 * error catalogue with the global `fetch` (see e2e.biconomyAccount.test.ts). This answers that download with
 * `[]` (no network here), or, while `offline` is set, fails it the way fetch fails without a network; every
 * other request goes out untouched. Counts how often the catalogue was asked for.
 */
export interface ErrorCatalogueStub {
  /** How often the SDK asked for the catalogue so far. */
  fetches(): number;
  /** While set, the download fails as fetch does without a network. */
  offline: boolean;
  restore(): void;
}

export function stubErrorCatalogue(): ErrorCatalogueStub {
  const realFetch = globalThis.fetch;
  let count = 0;
  const stub: ErrorCatalogueStub = {
    offline: false,
    fetches: () => count,
    restore: () => {
      globalThis.fetch = realFetch;
    },
  };
  globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url !== ERRORS_CATALOGUE) return realFetch(input, init);
    count += 1;
    if (stub.offline) throw new TypeError('fetch failed');
    return new Response('[]', { headers: { 'content-type': 'application/json' } });
  };
  return stub;
}

/** How `@biconomy/account` 4.x words a paymaster's JSON-RPC error message (getAAError, empty catalogue). */
export function accountSdkError(message: string): string {
  return `Unknown Error\n520\nhttps://docs.biconomy.io/troubleshooting/commonerrors\n\n${JSON.stringify(`Error coming from Paymaster: ${message}`)}`;
}
