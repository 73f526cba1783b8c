import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import * as accountSdk from '@biconomy/account';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { dappTokenSettingsSchema } from '../src/dappSettings/sponsorshipTokenSettings.js';
import * as sponsoredCases from './helpers/biconomySponsoredCases.js';
import { accountSdkError, applySdkFields, assertSponsoredOnChain, useSdkE2e, webhookBodies } from './helpers/sdkE2e.js';
import { createTenant, type Tenant, WEBHOOK_PATH, webhookHeaders } from './helpers/testContext.js';

/**
 * `@biconomy/account` 4.x (EntryPoint v0.6) for a dApp that requires backend sponsorship tokens. This SDK builds
 * its mode object from fixed fields and sends fixed headers, so its only carrier is `webhookData`
 * (docs/guides/sponsorship-tokens.md): `sponsorshipInfo.webhookData.sponsorshipToken`. Its SPONSORED flow is one
 * signing call, which spends the token; the signed `paymasterAndData` is run through `handleOps`; the dApp's webhook
 * gets its webhookData without the token; the same token again is refused with Patron's message through the SDK.
 */
type SponsoredMode = 'SPONSORED';
interface AccountSdk {
  createPaymaster(config: { paymasterUrl: string }): Promise<sponsoredCases.BiconomySponsoredPaymaster<SponsoredMode>>;
  readonly PaymasterMode: { readonly SPONSORED: SponsoredMode };
}
const { createPaymaster, PaymasterMode } = accountSdk as unknown as AccountSdk;

const KEY_ID = 'backend-eddsa';
let gated: Tenant | undefined;
let sign: ((claims: Record<string, unknown>) => Promise<string>) | undefined;

const e2e = useSdkE2e({
  errorCatalogue: true,
  async setUp(x) {
    const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const jwk = { ...(await exportJWK(publicKey)), kid: KEY_ID };
    const tenant = await createTenant(x.ctx.deps);
    await x.ctx.deps.store.dapps.setSponsorshipTokens({
      accountId: tenant.accountId,
      dappId: tenant.dappId,
      settings: dappTokenSettingsSchema.parse({ required: true, keys: [{ kind: 'jwk', id: KEY_ID, jwk }] }),
      now: Date.now(),
    });
    // The even-number webhook, on the gated dApp too: it must see webhookData without the token.
    const res = await fetch(`${x.base}${WEBHOOK_PATH}`, {
      method: 'POST',
      headers: { ...webhookHeaders(tenant), 'content-type': 'application/json' },
      body: JSON.stringify({ webhookUrl: x.receiver.url('/even-gated'), requestType: 'POST' }),
    });
    assert.equal(res.status, 200, await res.text());
    gated = tenant;
    sign = (claims) =>
      new SignJWT({ jti: randomUUID(), ...claims })
        .setProtectedHeader({ alg: 'EdDSA', kid: KEY_ID })
        .setAudience(tenant.dappId)
        .setExpirationTime('2m')
        .sign(privateKey);
  },
});

describe('@biconomy/account 4.x, a dApp requiring sponsorship tokens: the token in webhookData', () => {
  test('the SDK’s sponsored call with the token: signed, included by handleOps; the webhook never sees the token; the token twice is refused', async () => {
    assert.ok(gated && sign);
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(gated) });
    const op = await e2e.nextOp();
    const token = await sign({ sub: 'person-7' });
    const seen = e2e.receiver.requests.length;
    const dto = {
      mode: PaymasterMode.SPONSORED,
      calculateGasLimits: true,
      webhookData: { num: 2, sponsorshipToken: token },
    };

    // The SDK's own SPONSORED flow (BiconomySmartAccountV2.getPaymasterUserOp): one pm_sponsorUserOperation, which
    // returns signed paymasterAndData, so it spends the token.
    const r = await pm.getPaymasterAndData(sponsoredCases.biconomyPartialOp(op), dto);
    await assertSponsoredOnChain(e2e.fx, applySdkFields(op, r));

    for (const body of webhookBodies(e2e.receiver, '/even-gated', seen)) {
      assert.deepEqual((body as { data?: unknown }).data, { num: 2 }, 'the webhook gets webhookData without the token');
    }
    assert.ok(webhookBodies(e2e.receiver, '/even-gated', seen).length >= 1, 'the webhook was asked');

    const again = await e2e.nextOp();
    await assert.rejects(
      pm.getPaymasterAndData(sponsoredCases.biconomyPartialOp(again), dto),
      (err: unknown) => err instanceof Error && err.message.includes('sponsorship token'),
    );
    const refused = e2e.lastCall();
    assert.equal(refused.status, 401);
    const error = (refused.response as { error?: { code?: number; message?: string; data?: { reason?: string } } })
      .error;
    assert.equal(error?.code, -32013);
    assert.equal(error?.data?.reason, 'replayed', JSON.stringify(error));
  });

  test('without a token the SDK user gets Patron’s reason (token_required) and nothing is signed', async () => {
    assert.ok(gated);
    const pm = await createPaymaster({ paymasterUrl: e2e.paymasterUrl(gated) });
    const op = await e2e.nextOp();
    const dto = { mode: PaymasterMode.SPONSORED, calculateGasLimits: true, webhookData: { num: 2 } };
    let message = '';
    await assert.rejects(pm.getPaymasterAndData(sponsoredCases.biconomyPartialOp(op), dto), (err: unknown) => {
      message = err instanceof Error ? err.message : String(err);
      return true;
    });
    const refused = e2e.lastCall();
    const error = (refused.response as { error?: { code?: number; message?: string; data?: { reason?: string } } })
      .error;
    assert.equal(error?.code, -32013);
    assert.equal(error?.data?.reason, 'token_required');
    assert.equal(message, accountSdkError(String(error?.message)));
  });
});
