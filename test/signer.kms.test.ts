import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { bytesToHex, recoverAddress } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import { runCli } from '../src/cli/main.js';
import type { KmsSignerSetting } from '../src/config/signerSettings.js';
import { selectCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { openKmsSigner } from '../src/paymaster/signer/kmsSigner.js';
import { type FakeKms, startFakeKms } from './helpers/fakeKms.js';
import { runDemoAgainst } from './helpers/runDemo.js';
import { createTestContext, TEST_MASTER_KEY, testConfig } from './helpers/testContext.js';

/**
 * The AWS KMS back end: the real @aws-sdk/client-kms against a 127.0.0.1 server speaking KMS's JSON 1.1 protocol
 * for GetPublicKey and Sign (test/helpers/fakeKms.ts). What this does not cover (docs/guides/signer-backends.md):
 * AWS's own endpoint, IAM, SigV4 checks and KMS's latency.
 */
let kms: FakeKms;
const crypto = selectCryptoBackend().backend;
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

before(async () => {
  kms = await startFakeKms();
  // The SDK's default credential chain reads these first (no instance metadata is asked).
  process.env.AWS_ACCESS_KEY_ID = 'AKIDPATRONTEST';
  process.env.AWS_SECRET_ACCESS_KEY = 'patron-test-secret';
});
after(() => kms.close());

const settingFor = (keyId: string): KmsSignerSetting => ({
  kind: 'kms',
  keyId,
  region: 'eu-west-1',
  endpoint: kms.endpoint,
});

test('the address is the KMS key’s; signatures are low-s r ‖ s ‖ v that recover to it', async () => {
  const { keyId, privateKey } = kms.createKey();
  const signer = await openKmsSigner({ setting: settingFor(keyId), crypto });
  try {
    assert.equal(signer.address, privateKeyToAddress(bytesToHex(privateKey)));
    assert.equal(signer.backend, 'kms');
    const before = { calls: kms.signCalls(), highS: kms.highS() };
    let v28 = 0;
    for (let i = 0; i < 24; i++) {
      const digest = randomBytes(32);
      const sig = await signer.sign(digest);
      assert.equal(sig.length, 65);
      assert.ok(BigInt(bytesToHex(sig.subarray(32, 64))) <= HALF_N, 'low s (EIP-2)');
      assert.equal(await recoverAddress({ hash: bytesToHex(digest), signature: bytesToHex(sig) }), signer.address);
      v28 += sig[64] === 28 ? 1 : 0;
    }
    assert.equal(kms.signCalls() - before.calls, 24, 'one Sign call per signature');
    assert.ok(kms.highS() > before.highS, 'KMS answered high s (made low above)');
    assert.ok(v28 > 0 && v28 < 24, 'both recovery ids occurred');
  } finally {
    await signer.close();
  }
});

test('refusals: an unknown key and a key of another spec are named', async () => {
  await assert.rejects(
    openKmsSigner({ setting: settingFor('no-such-key'), crypto }),
    /AWS KMS GetPublicKey of PATRON_SIGNER_KMS_KEY_ID no-such-key failed \(NotFoundException: Key 'no-such-key' does not exist\)/,
  );
  await assert.rejects(
    openKmsSigner({ setting: settingFor(kms.createP256Key()), crypto }),
    /is ECC_NIST_P256 for SIGN_VERIFY: the paymaster signer needs an ECC_SECG_P256K1 key/,
  );
});

test('e2e: ops signed through KMS are accepted by handleOps on the in-process chain', {
  timeout: 120_000,
}, async () => {
  const { keyId, privateKey } = kms.createKey();
  const signer = await openKmsSigner({ setting: settingFor(keyId), crypto });
  const base = testConfig();
  const ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } }, signer });
  try {
    const dev = ctx.deps.devChain;
    assert.ok(dev !== undefined);
    const accepted = await dev.client.readContract({
      address: dev.paymaster,
      abi: patronPaymasterAbi,
      functionName: 'isSigner',
      args: [privateKeyToAddress(bytesToHex(privateKey))],
    });
    assert.equal(accepted, true, 'the dev chain’s paymaster accepts the KMS key');
    const before = kms.signCalls();
    const { lines } = await runDemoAgainst(ctx);
    assert.equal(lines.match(/UserOperationEvent: success true/g)?.length, 3, lines);
    assert.ok(kms.signCalls() - before >= 3, 'the paymaster signatures came from KMS');
  } finally {
    await ctx.close();
    await signer.close();
  }
});

test('the CLI’s transactions signed in KMS (--kms-key): deploy a paymaster, then its owner adds a signer', {
  timeout: 120_000,
}, async () => {
  const owner = kms.createKey();
  const paymasterSigner = kms.createKey();
  const ownerAddress = privateKeyToAddress(bytesToHex(owner.privateKey));
  const base = testConfig();
  const ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } } });
  try {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const rpcUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/chain/31337`;
    await fetch(rpcUrl, {
      method: 'POST',
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'hardhat_setBalance',
        params: [ownerAddress, '0xDE0B6B3A7640000'],
      }),
    });
    const cli = async (argv: string[]) => {
      let out = '';
      const code = await runCli({
        argv: [...argv, '--rpc', rpcUrl, '--kms-key', owner.keyId, '--json'],
        env: {
          PATRON_DATA_DIR: '/nonexistent-patron-test',
          PATRON_DEV_CHAIN: 'false',
          PATRON_SIGNER_KMS_KEY_ID: paymasterSigner.keyId,
          PATRON_SIGNER_KMS_REGION: 'eu-west-1',
          PATRON_SIGNER_KMS_ENDPOINT: kms.endpoint,
        },
        io: { stdout: (t) => (out += t), stderr: (t) => (out += t) },
        store: ctx.deps.store,
        masterKey: TEST_MASTER_KEY,
      });
      assert.equal(code, 0, out);
      return JSON.parse(out) as Record<string, unknown>;
    };
    const deployed = await cli(['paymaster', 'deploy']);
    assert.equal(deployed.owner, ownerAddress, 'the deployment was sent from the KMS key');
    assert.equal(
      deployed.signer,
      privateKeyToAddress(bytesToHex(paymasterSigner.privateKey)),
      'the configured KMS signer',
    );
    const next = `0x${'5'.repeat(40)}`;
    await cli(['paymaster', 'add-signer', '--paymaster', String(deployed.paymaster), '--signer', next]);
    const info = await cli(['paymaster', 'info', '--paymaster', String(deployed.paymaster)]);
    assert.deepEqual(
      (info.signers as string[]).map((a) => a.toLowerCase()),
      [privateKeyToAddress(bytesToHex(paymasterSigner.privateKey)).toLowerCase(), next],
    );
  } finally {
    await ctx.close();
  }
});
