import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type Address, bytesToHex, getAddress, recoverAddress } from 'viem';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import { runCli } from '../src/cli/main.js';
import { jsCryptoBackend, selectCryptoBackend } from '../src/crypto/cryptoBackend.js';
import type { PaymasterSigner } from '../src/paymaster/signer/paymasterSigner.js';
import { openPkcs11Signer } from '../src/paymaster/signer/pkcs11Signer.js';
import { openToken } from '../src/paymaster/signer/pkcs11Token.js';
import { runDemoAgainst } from './helpers/runDemo.js';
import { createSoftHsmToken } from './helpers/softHsm.js';
import { createTestContext, TEST_MASTER_KEY, testConfig } from './helpers/testContext.js';

/** The PKCS#11 back end against a real token: SoftHSM2, initialised afresh in a temp dir for this file. */
let hsm: ReturnType<typeof createSoftHsmToken>;
let generated: Address;
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

before(async () => {
  hsm = createSoftHsmToken();
  // The operator's command: a key generated inside the token, its address printed.
  let out = '';
  const cliCtx = await createTestContext();
  const code = await runCli({
    argv: ['signer', 'pkcs11-generate', '--json'],
    env: { PATRON_DATA_DIR: '/nonexistent-patron-test', PATRON_DEV_CHAIN: 'false', ...hsm.env },
    io: { stdout: (t) => (out += t), stderr: (t) => (out += t) },
    store: cliCtx.deps.store,
    masterKey: TEST_MASTER_KEY,
  });
  await cliCtx.close();
  assert.equal(code, 0, out);
  const printed = JSON.parse(out) as { signer: string; token: string; keyLabel: string };
  assert.deepEqual([printed.token, printed.keyLabel], ['patron-test', 'patron-signer']);
  generated = getAddress(printed.signer);
});
after(() => hsm.close());

test('the generated key stays in the token: private, sensitive, never extractable, its value unreadable', () => {
  const token = openToken(hsm.setting);
  try {
    const { pkcs11, lib, session } = token;
    lib.C_FindObjectsInit(session, [{ type: pkcs11.CKA_CLASS, value: pkcs11.CKO_PRIVATE_KEY }]);
    const keys = lib.C_FindObjects(session, 10);
    lib.C_FindObjectsFinal(session);
    assert.equal(keys.length, 1);
    const [key] = keys;
    assert.ok(key !== undefined);
    const attrs = lib.C_GetAttributeValue(session, key, [
      { type: pkcs11.CKA_SENSITIVE },
      { type: pkcs11.CKA_EXTRACTABLE },
      { type: pkcs11.CKA_TOKEN },
      { type: pkcs11.CKA_EC_PARAMS },
    ]);
    assert.deepEqual(
      attrs.map((a) => a.value.toString('hex')),
      ['01', '00', '01', '06052b8104000a'],
      'sensitive, not extractable, a token object, on secp256k1',
    );
    assert.throws(() => lib.C_GetAttributeValue(session, key, [{ type: pkcs11.CKA_VALUE }]), /SENSITIVE/);
  } finally {
    token.close();
  }
});

test('a second key under the same label is refused', async () => {
  const token = openToken(hsm.setting);
  try {
    const { generateKey } = await import('../src/paymaster/signer/pkcs11Token.js');
    assert.throws(
      () => generateKey(token, { keyLabel: 'patron-signer', crypto: jsCryptoBackend }),
      /already holds a key labelled "patron-signer"/,
    );
  } finally {
    token.close();
  }
});

test('signatures: r ‖ s ‖ v, low s, recovering to the key’s address, on parallel sessions', async () => {
  const signer = openPkcs11Signer({ setting: hsm.setting, crypto: selectCryptoBackend().backend });
  try {
    assert.equal(signer.address, generated);
    assert.equal(signer.backend, 'pkcs11');
    assert.equal(JSON.stringify(signer), JSON.stringify({ address: generated, backend: 'pkcs11' }));
    // More at once than the signer has sessions: the rest wait for one.
    const digests = Array.from({ length: 24 }, () => randomBytes(32));
    const signatures = await Promise.all(digests.map((d) => signer.sign(d)));
    for (const [i, sig] of signatures.entries()) {
      assert.equal(sig.length, 65);
      assert.ok(sig[64] === 27 || sig[64] === 28);
      assert.ok(BigInt(bytesToHex(sig.subarray(32, 64))) <= HALF_N, 'low s (EIP-2)');
      const digest = digests[i] ?? new Uint8Array();
      assert.equal(await recoverAddress({ hash: bytesToHex(digest), signature: bytesToHex(sig) }), generated);
    }
  } finally {
    await signer.close();
  }
  await assert.rejects(async () => signer.sign(randomBytes(32)), /closed/);
});

test('refusals name what to fix: wrong PIN, unknown token, no key under the label', () => {
  const crypto = jsCryptoBackend;
  assert.throws(
    () => openPkcs11Signer({ setting: { ...hsm.setting, pin: { value: '000000' } }, crypto }),
    /wrong PIN for token "patron-test"/,
  );
  assert.throws(
    () => openPkcs11Signer({ setting: { ...hsm.setting, tokenLabel: 'nope' }, crypto }),
    /no PKCS#11 token labelled "nope".*PATRON_SIGNER_PKCS11_TOKEN_LABEL/,
  );
  assert.throws(
    () => openPkcs11Signer({ setting: { ...hsm.setting, keyLabel: 'other' }, crypto }),
    /no key labelled "other" on token "patron-test": generate one with `patron signer pkcs11-generate`/,
  );
});

/**
 * End to end: Patron on its dev chain with the PKCS#11 signer (the dev chain deploys its paymasters with the
 * service signer's address), and `patron demo` driving a sponsored op, a USDC-paid op (whose simulation signs too)
 * and a v0.8 EIP-7702 op through handleOps: every paymaster signature came from the token.
 */
test('e2e: ops signed through the token are accepted by handleOps on the in-process chain', {
  timeout: 120_000,
}, async () => {
  const signer: PaymasterSigner = openPkcs11Signer({ setting: hsm.setting, crypto: selectCryptoBackend().backend });
  const base = testConfig();
  const ctx = await createTestContext({ config: { paymaster: { ...base.paymaster, devChain: true } }, signer });
  try {
    const dev = ctx.deps.devChain;
    assert.ok(dev !== undefined);
    const accepted = await dev.client.readContract({
      address: dev.paymaster,
      abi: patronPaymasterAbi,
      functionName: 'isSigner',
      args: [generated],
    });
    assert.equal(accepted, true, 'the dev chain’s paymaster accepts the token’s key');
    const { lines } = await runDemoAgainst(ctx);
    assert.equal(lines.match(/UserOperationEvent: success true/g)?.length, 3, lines);
  } finally {
    await ctx.close();
    await signer.close();
  }
});
