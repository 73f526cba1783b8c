import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { BaseError, http, RpcRequestError } from 'viem';
import { createPaymasterClient } from 'viem/account-abstraction';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { COUNTER_ADDRESS } from './helpers/patronPaymasterV06.js';
import { hexWireOpV06 } from './helpers/rpcFixture.js';
import { assertSponsoredOnChain, useSdkE2e, webhookBodies } from './helpers/sdkE2e.js';
import { createTokenIssuer, type TokenIssuer } from './helpers/sponsorshipTokens.js';
import { createTenant, type Tenant } from './helpers/testContext.js';

/**
 * Sponsorship tokens from the dApp's backend, end to end (docs/guides/sponsorship-tokens.md): viem's
 * `createPaymasterClient`, unmodified, carries the token in the ERC-7677 context to Patron listening on 127.0.0.1;
 * the signed op runs through handleOps on the in-process EntryPoint v0.6. Two dApps require tokens from the same
 * issuer key (so a token for one is refused on the other by its audience alone).
 */
let issuer: TokenIssuer;
let dappA: Tenant;
let dappB: Tenant;
const e2e = useSdkE2e({
  async setUp(s) {
    issuer = await createTokenIssuer();
    [dappA, dappB] = await Promise.all([createTenant(s.ctx.deps), createTenant(s.ctx.deps)]);
    for (const t of [dappA, dappB]) {
      await s.ctx.deps.accounts.setDappSponsorshipTokens({
        accountId: t.accountId,
        dappId: t.dappId,
        settings: issuer.settings(true),
      });
    }
  },
});

const client = (tenant: Tenant, headers?: Record<string, string>) =>
  createPaymasterClient({
    transport: http(e2e.paymasterUrl(tenant), headers === undefined ? {} : { fetchOptions: { headers } }),
  });

function params(op: UserOperationV06, context: unknown, withGas: boolean) {
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.initCode,
    callData: op.callData,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    ...(withGas
      ? {
          callGasLimit: op.callGasLimit,
          verificationGasLimit: op.verificationGasLimit,
          preVerificationGas: op.preVerificationGas,
        }
      : {}),
    chainId: e2e.fx.chain.chainId,
    entryPointAddress: e2e.fx.entryPoint,
    context,
  };
}

/** The -32013 refusal viem threw: its data.reason and HTTP status. */
function refusalOf(err: unknown): { reason: unknown; status: number | undefined; message: string } {
  assert.ok(err instanceof BaseError, `expected a viem error, got ${String(err)}`);
  const rpc = err.walk((e) => e instanceof RpcRequestError);
  assert.ok(rpc instanceof RpcRequestError, err.message);
  assert.equal(rpc.code, -32013, rpc.details);
  return { reason: (rpc.data as { reason?: unknown } | undefined)?.reason, status: rpc.status, message: rpc.details };
}

async function refusedWith(p: Promise<unknown>, reason: string): Promise<string> {
  let message = '';
  await assert.rejects(p, (err: unknown) => {
    const r = refusalOf(err);
    assert.equal(r.reason, reason, r.message);
    assert.equal(r.status, 401);
    message = r.message;
    return true;
  });
  return message;
}

/** One raw JSON-RPC POST (the header carrier, and shapes viem does not send). */
async function rpc(tenant: Tenant, method: string, rpcParams: unknown[], headers: Record<string, string> = {}) {
  const res = await fetch(e2e.paymasterUrl(tenant), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: rpcParams }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { result?: unknown; error?: { code: number; data?: unknown } },
  };
}

const hex = (n: bigint) => `0x${n.toString(16)}`;

/** A JWS with the given header and claims and a signature made by `sign` (the attacks' forged tokens). */
function forged(header: Record<string, unknown>, claims: Record<string, unknown>, sign: (input: string) => string) {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${sign(input)}`;
}

describe('sponsorship tokens through viem createPaymasterClient (EntryPoint v0.6)', () => {
  test('a token in the context: stub (verified, not spent) then data (spent); the op is included; the same token again is refused (replayed)', async () => {
    const op = await e2e.nextOp();
    const token = await issuer.mint({ aud: dappA.dappId, claims: { sub: 'alice', sender: op.sender } });
    const pm = client(dappA);
    const context = { mode: 'SPONSORED', sponsorshipToken: token };
    const stub = await pm.getPaymasterStubData(params(op, context, false));
    assert.equal(stub.isFinal, false);
    const data = await pm.getPaymasterData(params(op, context, true));
    assert.ok(data.paymasterAndData !== undefined);
    await assertSponsoredOnChain(e2e.fx, { ...op, paymasterAndData: data.paymasterAndData });

    const again = await e2e.nextOp();
    const message = await refusedWith(
      pm.getPaymasterData(params({ ...again, sender: op.sender }, context, true)),
      'replayed',
    );
    assert.match(message, /already used/);
  });

  test('the Authorization header carries the token on every call of a client built for it', async () => {
    const op = await e2e.nextOp();
    const token = await issuer.mint({ aud: dappA.dappId });
    const pm = client(dappA, { Authorization: `Bearer ${token}` });
    await pm.getPaymasterStubData(params(op, { mode: 'SPONSORED' }, false));
    const data = await pm.getPaymasterData(params(op, { mode: 'SPONSORED' }, true));
    assert.ok(data.paymasterAndData !== undefined);
    await assertSponsoredOnChain(e2e.fx, { ...op, paymasterAndData: data.paymasterAndData });
  });

  test('no token where the dApp requires one: -32013 token_required (HTTP 401) on the stub and the data', async () => {
    const op = await e2e.nextOp();
    const message = await refusedWith(
      client(dappA).getPaymasterStubData(params(op, { mode: 'SPONSORED' }, false)),
      'token_required',
    );
    assert.match(message, /sponsorshipToken/);
    await refusedWith(client(dappA).getPaymasterData(params(op, undefined, true)), 'token_required');
  });

  test('an expired token, one bound to another sender, one for another dApp: refused, each naming why', async () => {
    const op = await e2e.nextOp();
    const now = Math.floor(Date.now() / 1000);
    const expired = await issuer.mint({ aud: dappA.dappId, claims: { exp: now - 120, iat: now - 400 } });
    await refusedWith(client(dappA).getPaymasterData(params(op, { sponsorshipToken: expired }, true)), 'expired');
    const other = await e2e.nextOp();
    const bound = await issuer.mint({ aud: dappA.dappId, claims: { sender: other.sender } });
    await refusedWith(client(dappA).getPaymasterData(params(op, { sponsorshipToken: bound }, true)), 'sender_mismatch');
    const forA = await issuer.mint({ aud: dappA.dappId });
    await refusedWith(client(dappB).getPaymasterData(params(op, { sponsorshipToken: forA }, true)), 'wrong_audience');
    // None of them was spent: the token for A still signs on A.
    const data = await client(dappA).getPaymasterData(params(op, { sponsorshipToken: forA }, true));
    assert.ok(data.paymasterAndData !== undefined);
  });

  test('attacks: alg "none", HS256 with the public key as the secret (key confusion)', async () => {
    const op = await e2e.nextOp();
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: 'mallory', aud: dappA.dappId, exp: now + 60, jti: `j-${now}` };
    const none = forged({ alg: 'none', typ: 'JWT' }, claims, () => '');
    await refusedWith(
      client(dappA).getPaymasterData(params(op, { sponsorshipToken: none }, true)),
      'algorithm_not_allowed',
    );
    const publicJwk = JSON.stringify(issuer.settings().keys[0]?.jwk);
    const hs = forged({ alg: 'HS256', kid: issuer.kid }, claims, (input) =>
      createHmac('sha256', publicJwk).update(input).digest('base64url'),
    );
    await refusedWith(
      client(dappA).getPaymasterData(params(op, { sponsorshipToken: hs }, true)),
      'algorithm_not_allowed',
    );
  });

  test('two parallel data calls with one token: exactly one signature', async () => {
    const op = await e2e.nextOp();
    const token = await issuer.mint({ aud: dappA.dappId });
    const body = [hexWireOpV06(op), e2e.fx.entryPoint, hex(BigInt(e2e.fx.chain.chainId)), { sponsorshipToken: token }];
    const answers = await Promise.all([1, 2, 3, 4].map(() => rpc(dappA, 'pm_getPaymasterData', body)));
    const signed = answers.filter((a) => a.body.result !== undefined);
    const refused = answers.filter((a) => a.body.error?.code === -32013);
    assert.equal(signed.length, 1, JSON.stringify(answers.map((a) => a.body)));
    assert.equal(refused.length, 3);
    for (const r of refused) assert.deepEqual(r.body.error?.data, { reason: 'replayed' });
  });

  test('bounds: maxCostWei below the worst case, contracts without the called one', async () => {
    const op = await e2e.nextOp();
    const cheap = await issuer.mint({ aud: dappA.dappId, claims: { maxCostWei: '1' } });
    await refusedWith(
      client(dappA).getPaymasterData(params(op, { sponsorshipToken: cheap }, true)),
      'cost_above_bound',
    );
    const elsewhere = await issuer.mint({
      aud: dappA.dappId,
      claims: { contracts: ['0x000000000000000000000000000000000000dEaD'] },
    });
    await refusedWith(
      client(dappA).getPaymasterData(params(op, { sponsorshipToken: elsewhere }, true)),
      'contract_not_allowed',
    );
    // Within both bounds (the counter the op calls, a cost bound above its worst case): signed and included.
    const fitting = await issuer.mint({
      aud: dappA.dappId,
      claims: { contracts: [COUNTER_ADDRESS], maxCostWei: (10n ** 18n).toString() },
    });
    const data = await client(dappA).getPaymasterData(params(op, { sponsorshipToken: fitting }, true));
    assert.ok(data.paymasterAndData !== undefined);
    await assertSponsoredOnChain(e2e.fx, { ...op, paymasterAndData: data.paymasterAndData });
  });

  test('the other dialects carry it too: Biconomy mode object and the dry run by header; a malformed header is refused', async () => {
    const op = await e2e.nextOp();
    const token = await issuer.mint({ aud: dappA.dappId });
    const biconomy = await rpc(dappA, 'pm_sponsorUserOperation', [
      hexWireOpV06(op),
      { mode: 'SPONSORED', sponsorshipInfo: { webhookData: { sponsorshipToken: token } } },
    ]);
    assert.ok(biconomy.body.result !== undefined, JSON.stringify(biconomy.body));
    const dry = await rpc(dappA, 'pm_validateSponsorshipPolicies', [hexWireOpV06(op), e2e.fx.entryPoint, ['p']], {
      authorization: `Bearer ${await issuer.mint({ aud: dappA.dappId })}`,
    });
    assert.deepEqual(dry.body, { jsonrpc: '2.0', id: 1, result: [] });
    const bad = await rpc(dappA, 'pm_validateSponsorshipPolicies', [hexWireOpV06(op), e2e.fx.entryPoint, ['p']], {
      authorization: 'Basic abc',
    });
    assert.equal(bad.status, 401);
    assert.deepEqual(bad.body.error?.data, { reason: 'malformed' });
  });

  test("the dApp's webhook never sees the token (webhookData.sponsorshipToken is taken out)", async () => {
    const seen = e2e.receiver.requests.length;
    const op = await e2e.nextOp();
    const context = { mode: 'SPONSORED', sponsorshipInfo: { webhookData: { num: 2, sponsorshipToken: 'abc' } } };
    const data = await client(e2e.even).getPaymasterData(params(op, context, true));
    assert.ok(data.paymasterAndData !== undefined);
    assert.deepEqual(webhookBodies(e2e.receiver, '/even', seen), [{ data: { num: 2 } }]);
  });
});
