import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { createBicoBundlerClient, createBicoPaymasterClient } from '@biconomy/abstractjs';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createSmartAccountClient } from 'permissionless';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPimlicoClient } from 'permissionless/clients/pimlico';
import { BaseError, type Hex, http, keccak256, RpcRequestError, stringToHex } from 'viem';
import { createBundlerClient, createPaymasterClient, type SmartAccount } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { dappTokenSettingsSchema } from '../src/dappSettings/sponsorshipTokenSettings.js';
import { COUNTER_ADDRESS } from './helpers/patronPaymasterV06.js';
import { assertPaidByPatron, bundlerFees, type SdkE2eV07, useSdkE2eV07 } from './helpers/sdkE2eV07.js';
import { createTenant, type Tenant } from './helpers/testContext.js';

/**
 * A dApp that requires sponsorship tokens from its backend (docs/guides/sponsorship-tokens.md), served to today's
 * SDKs unmodified, each carrying the token where it can (the guide's table): viem's paymaster client and
 * permissionless's smart account client in the ERC-7677 context (`paymasterContext`), permissionless's Pimlico
 * client and @biconomy/abstractjs's paymaster client in an `Authorization: Bearer` header on their transport.
 * Every op goes through alto to the in-process chain and is checked paid by Patron's paymaster; the same token
 * twice, no token, and a token bound to another sender are refused with -32013 through the SDK's own error.
 */
const KEY_ID = 'backend-2026-11';
let issuer: { sign(claims: Record<string, unknown>): Promise<string> } | undefined;
let gated: Tenant | undefined;

const e2e = useSdkE2eV07({
  async setUp(x) {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: KEY_ID };
    const tenant = await createTenant(x.ctx.deps);
    const settings = dappTokenSettingsSchema.parse({ required: true, keys: [{ kind: 'jwk', id: KEY_ID, jwk }] });
    const updated = await x.ctx.deps.store.dapps.setSponsorshipTokens({
      accountId: tenant.accountId,
      dappId: tenant.dappId,
      settings,
      now: Date.now(),
    });
    assert.ok(updated?.sponsorshipTokens, 'the dApp requires tokens');
    gated = tenant;
    issuer = {
      sign: (claims) =>
        new SignJWT({ jti: randomUUID(), ...claims })
          .setProtectedHeader({ alg: 'ES256', kid: KEY_ID, typ: 'JWT' })
          .setAudience(tenant.dappId)
          .setExpirationTime('5m')
          .setIssuedAt()
          .sign(privateKey),
    };
  },
});

function ctxOf() {
  const x = e2e();
  assert.ok(gated && issuer, 'set up');
  return { x, tenant: gated, issuer };
}

const counterCall = { to: COUNTER_ADDRESS, data: '0x' as Hex };
const receiptPolling = { pollingInterval: 100, timeout: 30_000 } as const;
const ownerFor = (label: string) => privateKeyToAccount(keccak256(stringToHex(`patron-test-token-sdk-${label}`)));

async function simpleAccount(x: SdkE2eV07, label: string): Promise<SmartAccount> {
  return toSimpleSmartAccount({
    client: x.publicClient,
    owner: ownerFor(label),
    entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
  });
}

function accountClient(x: SdkE2eV07, account: SmartAccount, paymaster: ReturnType<typeof createPaymasterClient>) {
  return createSmartAccountClient({
    account,
    chain: x.chain,
    client: x.publicClient,
    bundlerTransport: http(x.alto.url),
    paymaster,
    userOperation: bundlerFees(x),
  });
}

/** Patron's JSON-RPC error as the SDK surfaced it (viem's RpcRequestError in the cause chain). */
function tokenRefusal(err: unknown): { code: number; reason: unknown } {
  assert.ok(err instanceof BaseError, `expected a viem error, got ${String(err)}`);
  const found = err.walk((e) => e instanceof RpcRequestError);
  assert.ok(found instanceof RpcRequestError, `no RpcRequestError in ${err.message}`);
  return { code: found.code, reason: (found.data as { reason?: unknown } | undefined)?.reason };
}

async function sendAndCheck(args: {
  x: SdkE2eV07;
  account: SmartAccount;
  send: () => Promise<Hex>;
  wait: (hash: Hex) => Promise<{ receipt: { transactionHash: Hex } }>;
}): Promise<void> {
  const { x, account } = args;
  const depositBefore = await x.deposit('0.7');
  const counterBefore = await x.counter();
  const userOpHash = await args.send();
  const { receipt } = await args.wait(userOpHash);
  await assertPaidByPatron(x, {
    version: '0.7',
    txHash: receipt.transactionHash,
    userOpHash,
    sender: account.address,
    depositBefore,
    counterBefore,
  });
}

describe('a dApp requiring backend tokens, through the SDKs unmodified (EntryPoint v0.7, alto)', () => {
  test('permissionless createSmartAccountClient + viem paymaster client: the token in paymasterContext; the op is included; the same token again and none are refused', async () => {
    const { x, tenant, issuer } = ctxOf();
    const account = await simpleAccount(x, 'context');
    const client = accountClient(x, account, createPaymasterClient({ transport: http(x.paymasterUrl(tenant.apiKey)) }));
    const token = await issuer.sign({ sub: 'user-ctx', sender: account.address });

    await sendAndCheck({
      x,
      account,
      send: () => client.sendUserOperation({ calls: [counterCall], paymasterContext: { sponsorshipToken: token } }),
      wait: (hash) => client.waitForUserOperationReceipt({ hash, ...receiptPolling }),
    });

    // The jti was spent by the signing call: the same token cannot sponsor a second op.
    await assert.rejects(
      client.sendUserOperation({ calls: [counterCall], paymasterContext: { sponsorshipToken: token } }),
      (err: unknown) => {
        assert.deepEqual(tokenRefusal(err), { code: -32013, reason: 'replayed' });
        return true;
      },
    );
    await assert.rejects(client.sendUserOperation({ calls: [counterCall] }), (err: unknown) => {
      assert.deepEqual(tokenRefusal(err), { code: -32013, reason: 'token_required' });
      return true;
    });
  });

  test('viem createBundlerClient: a token bound to another sender is refused, its own sender is sponsored', async () => {
    const { x, tenant, issuer } = ctxOf();
    const account = await simpleAccount(x, 'bound');
    const other = await simpleAccount(x, 'bound-other');
    const bundler = createBundlerClient({
      account,
      client: x.publicClient,
      transport: http(x.alto.url),
      paymaster: createPaymasterClient({ transport: http(x.paymasterUrl(tenant.apiKey)) }),
      userOperation: bundlerFees(x),
    });
    const foreign = await issuer.sign({ sub: 'user-bound', sender: other.address });
    await assert.rejects(
      bundler.sendUserOperation({ calls: [counterCall], paymasterContext: { sponsorshipToken: foreign } }),
      (err: unknown) => {
        assert.equal(tokenRefusal(err).code, -32013);
        return true;
      },
    );
    const own = await issuer.sign({ sub: 'user-bound', sender: account.address });
    await sendAndCheck({
      x,
      account,
      send: () => bundler.sendUserOperation({ calls: [counterCall], paymasterContext: { sponsorshipToken: own } }),
      wait: (hash) => bundler.waitForUserOperationReceipt({ hash, ...receiptPolling }),
    });
  });

  test('permissionless createPimlicoClient: the token in an Authorization header on its transport', async () => {
    const { x, tenant, issuer } = ctxOf();
    const account = await simpleAccount(x, 'pimlico-header');
    const token = await issuer.sign({ sub: 'user-header' });
    const paymaster = createPimlicoClient({
      transport: http(x.paymasterUrl(tenant.apiKey), {
        fetchOptions: { headers: { authorization: `Bearer ${token}` } },
      }),
      entryPoint: { address: x.entryPoint('0.7'), version: '0.7' },
    });
    const client = createSmartAccountClient({
      account,
      chain: x.chain,
      client: x.publicClient,
      bundlerTransport: http(x.alto.url),
      paymaster,
      userOperation: bundlerFees(x),
    });
    await sendAndCheck({
      x,
      account,
      send: () => client.sendUserOperation({ calls: [counterCall] }),
      wait: (hash) => client.waitForUserOperationReceipt({ hash, ...receiptPolling }),
    });
    const patronCalls = x.calls.filter((c) => c.target === 'patron' && c.method === 'pm_getPaymasterData');
    assert.ok(patronCalls.length > 0);
  });

  test('@biconomy/abstractjs createBicoPaymasterClient: the token in an Authorization header on its transport', async () => {
    const { x, tenant, issuer } = ctxOf();
    const account = await simpleAccount(x, 'bico-header');
    const token = await issuer.sign({ sub: 'user-bico' });
    const bundler = createBicoBundlerClient({
      account,
      client: x.publicClient,
      bundlerUrl: x.alto.url,
      paymaster: createBicoPaymasterClient({
        transport: http(x.paymasterUrl(tenant.apiKey), {
          fetchOptions: { headers: { authorization: `Bearer ${token}` } },
        }),
      }),
      userOperation: bundlerFees(x),
    });
    await sendAndCheck({
      x,
      account,
      send: () => bundler.sendUserOperation({ calls: [counterCall] }),
      wait: (hash) => bundler.waitForUserOperationReceipt({ hash, ...receiptPolling }),
    });
    // Without the header the same SDK is refused, with Patron's reason.
    const bare = createBicoBundlerClient({
      account,
      client: x.publicClient,
      bundlerUrl: x.alto.url,
      paymaster: createBicoPaymasterClient({ paymasterUrl: x.paymasterUrl(tenant.apiKey) }),
      userOperation: bundlerFees(x),
    });
    await assert.rejects(bare.sendUserOperation({ calls: [counterCall] }), (err: unknown) => {
      assert.deepEqual(tokenRefusal(err), { code: -32013, reason: 'token_required' });
      return true;
    });
  });
});
