import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Address, bytesToHex, recoverAddress } from 'viem';
import { selectCryptoBackend } from '../src/crypto/cryptoBackend.js';
import type { PaymasterSigner } from '../src/paymaster/signer/paymasterSigner.js';
import { openPkcs11Signer, PKCS11_REOPEN_EVERY_MS } from '../src/paymaster/signer/pkcs11Signer.js';
import { generateKey, openToken } from '../src/paymaster/signer/pkcs11Token.js';
import { toRpcError } from '../src/rpc/rpcErrors.js';
import { createSoftHsmToken, restartSoftHsm } from './helpers/softHsm.js';

/**
 * The PKCS#11 signer outliving its token's restart, on a real SoftHSM2 token: the restart closes every session of
 * the token (C_CloseAllSessions) or finalises the module (C_Finalize) from a second handle, as a token's power cycle
 * or a library's reconnect to its HSM does; the signer under test finds out only by its next signature's error.
 */
const crypto = selectCryptoBackend().backend;
let hsm: ReturnType<typeof createSoftHsmToken>;
let address: Address;

before(() => {
  hsm = createSoftHsmToken('patron-reopen');
  const token = openToken(hsm.setting);
  try {
    address = generateKey(token, { keyLabel: hsm.setting.keyLabel, crypto }).address;
  } finally {
    token.close();
  }
});
after(() => hsm.close());

/** The signer's log lines, by message. */
function recordingLog() {
  const lines: { level: string; obj: object; msg: string }[] = [];
  const count = (pattern: RegExp) => lines.filter((l) => pattern.test(l.msg)).length;
  return {
    lines,
    count,
    logger: {
      info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }),
      warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }),
    },
  };
}

async function assertSignsFor(signer: PaymasterSigner, count: number): Promise<void> {
  const digests = Array.from({ length: count }, () => randomBytes(32));
  const signatures = await Promise.all(digests.map((d) => signer.sign(d)));
  for (const [i, signature] of signatures.entries()) {
    const hash = bytesToHex(digests[i] ?? new Uint8Array());
    assert.equal(await recoverAddress({ hash, signature: bytesToHex(signature) }), address);
  }
}

for (const lose of ['sessions', 'module'] as const) {
  describe(`a token restart that loses the ${lose}`, () => {
    test('the next signature reopens the token, logs the loss and the recovery, and verifies', async () => {
      const log = recordingLog();
      const signer = openPkcs11Signer({ setting: hsm.setting, crypto, logger: log.logger });
      try {
        await assertSignsFor(signer, 1);
        restartSoftHsm({ setting: hsm.setting, lose });
        await assertSignsFor(signer, 1);
        const [lost, reopened] = log.lines;
        const code = lose === 'sessions' ? 'CKR_SESSION_HANDLE_INVALID' : 'CKR_CRYPTOKI_NOT_INITIALIZED';
        assert.deepEqual(
          [lost?.level, lost?.msg, (lost?.obj as { loss?: string } | undefined)?.loss],
          ['warn', 'PKCS#11 token lost: reopening it', code],
        );
        assert.deepEqual([reopened?.level, reopened?.msg], ['info', 'PKCS#11 token reopened: signing resumed']);
        assert.equal(log.lines.length, 2, JSON.stringify(log.lines));
        const pin = 'value' in hsm.setting.pin ? hsm.setting.pin.value : '';
        assert.ok(!JSON.stringify(log.lines).includes(pin), 'the PIN is never logged');
        // And it goes on signing on the new opening, with no more reopening.
        await assertSignsFor(signer, 8);
        assert.equal(log.lines.length, 2);
      } finally {
        await signer.close();
      }
    });

    test('signatures in flight when the token goes share one reopen, each retried once, all verifying', async () => {
      const log = recordingLog();
      const signer = openPkcs11Signer({ setting: hsm.setting, crypto, logger: log.logger });
      try {
        await assertSignsFor(signer, 1);
        restartSoftHsm({ setting: hsm.setting, lose });
        // 24 at once over 4 sessions: 4 meet the loss on the token, 20 wait for a session of the lost opening.
        await assertSignsFor(signer, 24);
        assert.equal(log.count(/^PKCS#11 token lost: reopening it$/), 1, JSON.stringify(log.lines));
        assert.equal(log.count(/token reopened/), 1, JSON.stringify(log.lines));
      } finally {
        await signer.close();
      }
    });
  });
}

test('a token that stays gone: the documented error at once, one reopen per second at most, then recovery', async () => {
  const log = recordingLog();
  let clock = 1_000_000;
  const signer = openPkcs11Signer({ setting: hsm.setting, crypto, logger: log.logger, now: () => clock });
  try {
    await assertSignsFor(signer, 1);
    hsm.hide();
    restartSoftHsm({ setting: hsm.setting, lose: 'module' });
    const started = performance.now();
    const refused = await Promise.resolve(signer.sign(randomBytes(32))).then(
      () => assert.fail('signed without its token'),
      (err: unknown) => err,
    );
    assert.ok(refused instanceof Error && refused.name === 'Pkcs11TokenUnavailableError', String(refused));
    assert.match(refused.message, /token "patron-reopen" is unavailable \(no PKCS#11 token labelled "patron-reopen"/);
    // What the caller gets: docs/reference/json-rpc.md's -32603 with a 503 (transient: retried), the details in the log.
    assert.deepEqual(toRpcError(refused), {
      error: { code: -32603, message: 'Internal error' },
      http: 503,
      internal: true,
    });
    // The token is back, but within the second no attempt is made: refused at once, naming the wait.
    hsm.restore();
    clock += PKCS11_REOPEN_EVERY_MS - 1;
    await assert.rejects(
      async () => signer.sign(randomBytes(32)),
      /token "patron-reopen" is unavailable \(no PKCS#11 token labelled .*\); the next attempt to reopen it is in 1 ms/,
    );
    assert.ok(performance.now() - started < 5_000, 'refusals, not a hang');
    clock += 1;
    await assertSignsFor(signer, 4);
    assert.deepEqual(
      log.lines.map((l) => l.msg),
      [
        'PKCS#11 token lost: reopening it',
        'PKCS#11 token lost: reopening it failed',
        'PKCS#11 token reopened: signing resumed',
      ],
    );
  } finally {
    await signer.close();
  }
});

test('a key under the label that is not the signer’s any more is refused, not signed with', async () => {
  const signer = openPkcs11Signer({ setting: hsm.setting, crypto });
  const other = createSoftHsmToken('patron-reopen');
  try {
    await assertSignsFor(signer, 1);
    // The same token label and key label, another key: a token re-initialised with a new key while Patron ran.
    restartSoftHsm({ setting: hsm.setting, lose: 'module' });
    const token = openToken(other.setting);
    try {
      generateKey(token, { keyLabel: other.setting.keyLabel, crypto });
    } finally {
      token.close();
    }
    await assert.rejects(async () => signer.sign(randomBytes(32)), /is now 0x[0-9a-fA-F]{40}, not the signer/);
  } finally {
    await signer.close();
    other.close();
    // createSoftHsmToken pointed the library at the other token's directory: back to this file's.
    process.env.SOFTHSM2_CONF = hsm.conf;
  }
});
