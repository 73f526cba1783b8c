import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildDeployingOp } from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { createTokenIssuer, type TokenIssuer } from './helpers/sponsorshipTokens.js';
import { BACKEND, createTenant, type Tenant } from './helpers/testContext.js';
import { answer, type Receiver, startReceiver } from './helpers/webhookReceiver.js';

/**
 * Issue 31, "one token, one signature, ever", the attacker's way: a sponsorship token is accepted until its exp plus
 * the clock skew (30 s), and its spent jti was kept exactly that long. The attacker spends a token right at that
 * edge, then sends it again at once to a dApp whose webhook takes a while: the second request was admitted (still
 * inside the skew), waited on the webhook past the edge, found the jti's row expired and took it over, and the same
 * token signed twice (2 of 2 in the red team's run). Now the reservation refuses a token past its edge, whatever
 * admitted it.
 */
let app: RpcFixture;
let issuer: TokenIssuer;
let tenant: Tenant;
let webhook: Receiver;
/** The webhook's pause for every call after the first: what a slow dApp backend takes (its budget is 2 s). */
const SLOW_MS = 1_900;
let webhookCalls = 0;

before(async () => {
  app = await startRpcFixture();
  issuer = await createTokenIssuer();
  tenant = await createTenant(app.ctx.deps);
  await app.ctx.deps.accounts.setDappSponsorshipTokens({
    accountId: tenant.accountId,
    dappId: tenant.dappId,
    settings: issuer.settings(true),
  });
  webhook = await startReceiver(async (req, res) => {
    webhookCalls += 1;
    if (webhookCalls > 1) await new Promise((r) => setTimeout(r, SLOW_MS));
    return answer({ arePoliciesVerified: true })(req, res);
  });
  await app.ctx.deps.webhooks.create({ dappId: tenant.dappId, url: webhook.url('/verify'), requestType: 'POST' });
});
after(async () => {
  await app.close();
  await webhook.close();
});

const sponsor = (op: Awaited<ReturnType<typeof buildDeployingOp>>, token: string) =>
  app.rpc(
    'pm_sponsorUserOperation',
    [biconomyWireOp(op), { mode: 'SPONSORED', calculateGasLimits: false, sponsorshipToken: token }],
    { apiKey: tenant.apiKey },
  );

describe(`a sponsorship token resent at its expiry edge behind a slow webhook (${BACKEND})`, () => {
  test('signs once; the second request, admitted inside the skew and reserved past it, is refused as expired', async () => {
    const [a, b] = [await buildDeployingOp(app.fx, 9_001n), await buildDeployingOp(app.fx, 9_002n)];
    // At the start of a second S, a token accepted until exp + 30 = S + 1 (the last second it is valid in): the
    // first request spends it at once; the second is admitted inside S and reserved after S + 1, past the webhook.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    const s = Math.floor(Date.now() / 1000);
    const token = await issuer.mint({ aud: tenant.dappId, claims: { exp: s - 29, iat: s - 60 } });
    const first = await sponsor(a, token);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    // Half-way through S: still admitted, and reserved after the webhook's 1.9 s, in S + 2.
    await new Promise((r) => setTimeout(r, Math.max(0, s * 1000 + 500 - Date.now())));
    assert.ok(Date.now() < (s + 1) * 1000, 'the machine kept up: the second request starts inside S');
    const second = await sponsor(b, token);
    assert.equal(webhookCalls, 2, 'the second request was admitted (its token still inside the skew) and checked');
    assert.equal(second.status, 401, JSON.stringify(second.body));
    assert.equal(second.body.error?.code, -32013);
    assert.equal(second.body.error?.data?.reason, 'expired', second.body.error?.message);
  });
});
