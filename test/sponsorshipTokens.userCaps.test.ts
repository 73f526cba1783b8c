import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { hexWireOpV06 } from './helpers/rpcFixture.js';
import { assertSponsoredOnChain, useSdkE2e } from './helpers/sdkE2e.js';
import { createTokenIssuer, type TokenIssuer } from './helpers/sponsorshipTokens.js';
import { createTenant, type Tenant } from './helpers/testContext.js';

/**
 * Per-person caps through the paymaster URL (docs/guides/policies.md, "Caps per end user"): the dApp requires
 * backend tokens and caps each `sub` at a number of ops, whatever wallet the person sends from. A person farming
 * with fresh wallets gets the cap and no more, in sequence and in parallel; another person has their own count;
 * what was signed is included on the in-process EntryPoint v0.6.
 */
const CAP = 2;
let issuer: TokenIssuer;
let dapp: Tenant;
let policyId: string;
const e2e = useSdkE2e({
  async setUp(s) {
    issuer = await createTokenIssuer();
    dapp = await createTenant(s.ctx.deps);
    await s.ctx.deps.accounts.setDappSponsorshipTokens({
      accountId: dapp.accountId,
      dappId: dapp.dappId,
      settings: issuer.settings(true),
    });
    ({ id: policyId } = await s.ctx.deps.policies.create({
      dappId: dapp.dappId,
      name: 'per person',
      rules: { caps: [{ scope: 'user', unit: 'ops', limit: String(CAP), resets: 'daily' }] },
    }));
  },
});

async function sponsor(op: UserOperationV06, sub: string, given?: string) {
  const token = given ?? (await issuer.mint({ aud: dapp.dappId, claims: { sub } }));
  const res = await fetch(e2e.paymasterUrl(dapp), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'pm_sponsorUserOperation',
      params: [
        hexWireOpV06(op),
        { mode: 'SPONSORED', calculateGasLimits: false, sponsorshipInfo: { webhookData: { sponsorshipToken: token } } },
      ],
    }),
  });
  return (await res.json()) as {
    result?: { paymasterAndData?: `0x${string}` };
    error?: { code: number; data?: { rule?: string; scope?: string; reason?: string } };
  };
}

describe('user caps through the paymaster URL with backend tokens', () => {
  test('one person, three fresh wallets: the cap signs two (both included), the third is denied as a per-user cap', async () => {
    const ops = [await e2e.nextOp(), await e2e.nextOp(), await e2e.nextOp()];
    for (const op of ops.slice(0, CAP)) {
      const answer = await sponsor(op, 'farmer');
      assert.ok(answer.result?.paymasterAndData, JSON.stringify(answer));
      await assertSponsoredOnChain(e2e.fx, { ...op, paymasterAndData: answer.result.paymasterAndData });
    }
    const third = await sponsor(ops[CAP] as UserOperationV06, 'farmer');
    assert.equal(third.error?.code, -32012, JSON.stringify(third));
    assert.equal(third.error?.data?.rule, 'cap');
    assert.equal(third.error?.data?.scope, 'user');
    // Another person is counted apart.
    const other = await sponsor(ops[CAP] as UserOperationV06, 'someone-else');
    assert.ok(other.result?.paymasterAndData, JSON.stringify(other));
  });

  test('in parallel, ten fresh wallets of one person: exactly the cap is signed', async () => {
    const ops = await Promise.all(Array.from({ length: 10 }, () => e2e.nextOp()));
    const answers = await Promise.all(ops.map((op) => sponsor(op, 'parallel-farmer')));
    const signed = answers.filter((a) => a.result?.paymasterAndData !== undefined);
    const capped = answers.filter((a) => a.error?.code === -32012 && a.error.data?.scope === 'user');
    assert.equal(signed.length, CAP, JSON.stringify(answers));
    assert.equal(capped.length, 10 - CAP);
  });

  // Last: it raises the cap.
  test('a token the cap refused stays usable: once the cap has room, the same token signs, then never again', async () => {
    const ops = [await e2e.nextOp(), await e2e.nextOp(), await e2e.nextOp()];
    for (const op of ops.slice(0, CAP)) assert.ok((await sponsor(op, 'patient')).result?.paymasterAndData);
    const third = ops[CAP] as UserOperationV06;
    const token = await issuer.mint({ aud: dapp.dappId, claims: { sub: 'patient' } });
    const capped = await sponsor(third, 'patient', token);
    assert.equal(capped.error?.data?.scope, 'user', JSON.stringify(capped));
    await e2e.ctx.deps.policies.update({
      dappId: dapp.dappId,
      policyId,
      // Room for two more: the second shows the token, not the cap, refusing its reuse.
      rules: { caps: [{ scope: 'user', unit: 'ops', limit: String(CAP + 2), resets: 'daily' }] },
    });
    const signed = await sponsor(third, 'patient', token);
    assert.ok(signed.result?.paymasterAndData, JSON.stringify(signed));
    await assertSponsoredOnChain(e2e.fx, { ...third, paymasterAndData: signed.result.paymasterAndData });
    const again = await sponsor(await e2e.nextOp(), 'patient', token);
    assert.equal(again.error?.code, -32013, JSON.stringify(again));
    assert.equal(again.error?.data?.reason, 'replayed');
  });
});
