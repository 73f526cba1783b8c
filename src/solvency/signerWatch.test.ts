import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Address } from 'viem';
import { SignerNotAcceptedError } from '../errors/PatronError.js';
import type { AlertMessage } from './alertWebhook.js';
import { startSignerWatch } from './signerWatch.js';

/**
 * The signer watch's decisions with the contract's answer in the test's hands: what is logged and posted on each
 * change (once, not per read), what a failed read does, and what the request path is told. The watch against a
 * real paymaster, through the service, is test/signerRotation.test.ts.
 */
const PAYMASTER: Address = '0x00000000000000000000000000000000000000aa';
const OTHER: Address = '0x00000000000000000000000000000000000000bb';
const SIGNER: Address = '0x00000000000000000000000000000000000000cc';

function harness() {
  let answer: boolean | Error = true;
  const logs: Array<{ level: string; msg: string }> = [];
  const alerts: AlertMessage[] = [];
  const log = (level: string) => (_obj: object, msg: string) => logs.push({ level, msg });
  const watch = startSignerWatch({
    paymasters: [
      {
        chainId: 1,
        paymaster: PAYMASTER,
        entryPointVersion: '0.7',
        isAccepted: async () => {
          if (answer instanceof Error) throw answer;
          return answer;
        },
      },
      { chainId: 1, paymaster: OTHER, entryPointVersion: '0.6', isAccepted: async () => true },
    ],
    signer: SIGNER,
    // Reads only when the test asks (checkNow).
    intervalMs: 3_600_000,
    alert: {
      send: async (m) => {
        alerts.push(m);
        return true;
      },
      close: () => undefined,
    },
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
    now: () => 1_000,
  });
  return {
    watch,
    logs,
    alerts,
    set: (a: boolean | Error) => {
      answer = a;
    },
  };
}

describe('signer watch', () => {
  test('a removed key: refused on that paymaster only, one error log and one alert; restored: resumes', async () => {
    const h = harness();
    await h.watch.checkNow();
    h.watch.assertActive({ chainId: 1, paymaster: PAYMASTER });
    assert.equal(h.logs.length, 0);

    h.set(false);
    await h.watch.checkNow();
    await h.watch.checkNow();
    assert.throws(
      () => h.watch.assertActive({ chainId: 1, paymaster: PAYMASTER }),
      (err: unknown) =>
        err instanceof SignerNotAcceptedError &&
        err.code === 'SIGNER_NOT_ACCEPTED' &&
        /does not accept Patron's signing key/.test(err.message),
    );
    // Another paymaster (another EntryPoint) that still accepts the key signs on.
    h.watch.assertActive({ chainId: 1, paymaster: OTHER });
    assert.deepEqual(
      h.logs.map((l) => l.level),
      ['error'],
      'one error line for the change, none per read',
    );
    assert.deepEqual(
      h.alerts.map((a) => [a.type, a.data.paymaster, a.data.signer]),
      [['paymaster.signer.removed', PAYMASTER, SIGNER]],
    );
    assert.equal(h.watch.state().find((s) => s.paymaster === PAYMASTER)?.accepted, false);

    // A read that fails keeps the key refused: it is trusted again only when a read says so.
    h.set(new Error('RPC down'));
    await h.watch.checkNow();
    await h.watch.checkNow();
    assert.throws(() => h.watch.assertActive({ chainId: 1, paymaster: PAYMASTER }), SignerNotAcceptedError);
    assert.equal(h.logs.filter((l) => l.level === 'warn').length, 1, 'one warning per failing streak');

    h.set(true);
    await h.watch.checkNow();
    h.watch.assertActive({ chainId: 1, paymaster: PAYMASTER });
    assert.deepEqual(
      h.alerts.map((a) => a.type),
      ['paymaster.signer.removed', 'paymaster.signer.restored'],
    );
    await h.watch.close();
  });

  test('a read that fails while the key is accepted keeps signing (an RPC hiccup is no removal)', async () => {
    const h = harness();
    h.set(new Error('timeout'));
    await h.watch.checkNow();
    h.watch.assertActive({ chainId: 1, paymaster: PAYMASTER });
    // No read has answered yet: the key counts as accepted (start-up verified it), and no alert went out.
    assert.equal(h.watch.state().find((s) => s.paymaster === PAYMASTER)?.accepted, undefined);
    assert.equal(h.alerts.length, 0);
    await h.watch.close();
  });
});
