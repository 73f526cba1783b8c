import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { toSimpleSmartAccount } from 'permissionless/accounts';
import { type Address, type Hex, parseEventLogs, toHex } from 'viem';
import {
  entryPoint07Abi,
  entryPoint08Abi,
  getUserOperationHash,
  toPackedUserOperation,
  type UserOperation,
} from 'viem/account-abstraction';
import { opKey } from '../src/chain/opKey.js';
import { COUNTER_ADDRESS, counterValue } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import type { V07Version } from './helpers/rpcV07.js';
import { hexWire, newSimpleAccountOp, quantity, rpcV2 as rpcV2Of } from './helpers/rpcV07.js';

/**
 * The paymaster URL for EntryPoint v0.7 and v0.8 through the app: the ERC-7677 stub and data, the single data call
 * with zero limits that @biconomy/abstractjs makes (the signature binds gas caps the bundler's later estimate fits
 * under), Biconomy's and Pimlico's pm_sponsorUserOperation; every op submitted with handleOps on the dev chain's
 * canonical EntryPoint, the paymaster charged exactly the op's actualGasCost.
 */
let app: RpcFixture;
before(async () => {
  app = await startRpcFixture({ tokens: true });
});
after(() => app.close());

type Version = V07Version;
const ABIS = { '0.7': entryPoint07Abi, '0.8': entryPoint08Abi } as const;

const counterCall = [{ to: COUNTER_ADDRESS, data: '0x01' as const }];
const newAccountOp = (version: Version) => newSimpleAccountOp(app.fx, version, counterCall);
const rpcV2 = (method: string, params: unknown[]) => rpcV2Of(app, method, params);
const wire = hexWire;
const hex = (n: bigint) => toHex(n);

/** Signs the op with the account, submits it with handleOps, returns the event and the deposit change. */
async function execute(
  version: Version,
  account: Awaited<ReturnType<typeof toSimpleSmartAccount>>,
  op: UserOperation<'0.7'>,
  capped = false,
) {
  const entryPoint = app.fx.entryPoints[version];
  const paymaster = app.fx.paymasters[version];
  const signature = await account.signUserOperation({ ...op, chainId: app.fx.chain.chainId });
  const signed = { ...op, signature };
  const abi = ABIS[version];
  const deposit = () =>
    app.fx.client.readContract({ address: entryPoint, abi, functionName: 'balanceOf', args: [paymaster] });
  const before = await deposit();
  const counter = await counterValue(app.fx);
  const hash = await app.fx.bundler.writeContract({
    address: entryPoint,
    abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation(signed)], app.fx.bundler.account.address],
    gas: 5_000_000n,
  });
  const receipt = await app.fx.client.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  const [event] = parseEventLogs({ abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  assert.ok(event, 'UserOperationEvent');
  assert.equal(event.args.success, true);
  assert.equal(event.args.paymaster, paymaster);
  assert.equal(before - (await deposit()), event.args.actualGasCost);
  assert.equal(await counterValue(app.fx), counter + 1n);
  const expectedHash = getUserOperationHash({
    chainId: app.fx.chain.chainId,
    entryPointAddress: entryPoint,
    entryPointVersion: version,
    userOperation: signed,
  });
  assert.equal(event.args.userOpHash, expectedHash);
  // What Patron recorded when it signed (the key of the spend ledger, the solvency guard and settlement) is the
  // EntryPoint's userOpHash; for a signature of caps, the op key (chain/opKey.ts), since the bundler set the gas.
  // Either way settlement finds it: the row gets the op's actual cost, and no liability stays open.
  await app.ctx.deps.requestLog.flush();
  await app.ctx.deps.settlement.runOnce();
  const key = capped
    ? opKey({ chainId: app.fx.chain.chainId, entryPoint, sender: signed.sender, nonce: signed.nonce })
    : expectedHash;
  const logged = await app.ctx.deps.store.requestLog.query({
    accountId: app.tenant.accountId,
    sender: signed.sender.toLowerCase(),
    limit: 10,
  });
  const row = logged.find((r) => r.userOpHash === key.toLowerCase());
  assert.ok(row, `the request log keys ${signed.sender}'s op by ${capped ? 'its op key' : "the EntryPoint's hash"}`);
  assert.equal(row.actualCostWei, event.args.actualGasCost.toString());
  const solvency = (await app.ctx.deps.solvency.checkNow()).find((x) => x.paymaster === paymaster);
  assert.equal(solvency?.liabilitiesWei, 0n, 'settled: nothing of the op is a liability any more');
  return event.args;
}

for (const version of ['0.7', '0.8'] as const) {
  describe(`EntryPoint v${version} on /api/v2`, () => {
    test('ERC-7677 stub then data over the final gas: the op executes, the paymaster pays', async () => {
      const { account, op } = await newAccountOp(version);
      const entryPoint = app.fx.entryPoints[version];
      const chainHex = hex(BigInt(app.fx.chain.chainId));
      const stub = await rpcV2('pm_getPaymasterStubData', [
        wire({ ...op, callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n }),
        entryPoint,
        chainHex,
        {},
      ]);
      assert.equal(stub.status, 200, JSON.stringify(stub.body));
      const s = stub.body.result ?? {};
      assert.equal(s.paymaster, app.fx.paymasters[version]);
      assert.equal(s.isFinal, false);
      assert.match(String(s.paymasterVerificationGasLimit), /^0x[0-9a-f]+$/);
      assert.match(String(s.paymasterPostOpGasLimit), /^0x[0-9a-f]+$/);
      // The wallet's estimate (here: generous fixed limits), then the final data over exactly those.
      const gas = { callGasLimit: 200_000n, verificationGasLimit: 400_000n, preVerificationGas: 55_000n };
      const withPaymaster = {
        ...op,
        ...gas,
        paymaster: s.paymaster as Address,
        paymasterVerificationGasLimit: quantity(s.paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: quantity(s.paymasterPostOpGasLimit),
      };
      const data = await rpcV2('pm_getPaymasterData', [
        wire({ ...withPaymaster, paymasterData: s.paymasterData }),
        entryPoint,
        chainHex,
        {},
      ]);
      assert.equal(data.status, 200, JSON.stringify(data.body));
      const d = data.body.result ?? {};
      assert.equal(String(d.paymasterData).length, String(s.paymasterData).length, 'stub and data have one length');
      assert.equal(d.callGasLimit, undefined, 'no limits computed: none asked for');
      await execute(version, account, {
        ...withPaymaster,
        paymasterData: d.paymasterData as Hex,
      } as UserOperation<'0.7'>);
    });

    test("abstractjs's single data call before estimation: limits returned, a bundler's own estimate under the signed caps executes", async () => {
      const { account, op } = await newAccountOp(version);
      const entryPoint = app.fx.entryPoints[version];
      const context = { mode: 'SPONSORED', calculateGasLimits: true, expiryDuration: 300 };
      const data = await rpcV2('pm_getPaymasterData', [
        wire({ ...op, callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n }),
        entryPoint,
        hex(BigInt(app.fx.chain.chainId)),
        context,
      ]);
      assert.equal(data.status, 200, JSON.stringify(data.body));
      const d = data.body.result ?? {};
      for (const k of ['callGasLimit', 'verificationGasLimit', 'preVerificationGas'])
        assert.match(String(d[k]), /^0x[0-9a-f]+$/, k);
      // viem drops the limits and the bundler estimates its own, within the caps: here 1.4 × Patron's for the
      // call and validation, and for preVerificationGas (which is bounded by the op's size) what alto asks, 1.1 ×
      // its own formula, which Patron's figure is at least.
      const bundlerGas = (k: string) => (quantity(d[k]) * (k === 'preVerificationGas' ? 11n : 14n)) / 10n;
      await execute(
        version,
        account,
        {
          ...op,
          callGasLimit: bundlerGas('callGasLimit'),
          verificationGasLimit: bundlerGas('verificationGasLimit'),
          preVerificationGas: bundlerGas('preVerificationGas'),
          paymaster: d.paymaster as Address,
          paymasterVerificationGasLimit: quantity(d.paymasterVerificationGasLimit),
          paymasterPostOpGasLimit: quantity(d.paymasterPostOpGasLimit),
          paymasterData: d.paymasterData as Hex,
        } as UserOperation<'0.7'>,
        true,
      );
    });

    test("Pimlico's pm_sponsorUserOperation names the EntryPoint: v0.7 fields in hex, the op executes", async () => {
      const { account, op } = await newAccountOp(version);
      const r = await rpcV2('pm_sponsorUserOperation', [
        wire(op),
        app.fx.entryPoints[version],
        { validForSeconds: 120 },
      ]);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const p = r.body.result ?? {};
      assert.deepEqual(Object.keys(p).sort(), [
        'callGasLimit',
        'paymaster',
        'paymasterData',
        'paymasterPostOpGasLimit',
        'paymasterVerificationGasLimit',
        'preVerificationGas',
        'verificationGasLimit',
      ]);
      await execute(version, account, {
        ...op,
        callGasLimit: quantity(p.callGasLimit),
        verificationGasLimit: quantity(p.verificationGasLimit),
        preVerificationGas: quantity(p.preVerificationGas),
        paymaster: p.paymaster as Address,
        paymasterVerificationGasLimit: quantity(p.paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: quantity(p.paymasterPostOpGasLimit),
        paymasterData: p.paymasterData as Hex,
      } as UserOperation<'0.7'>);
    });
  });
}

describe('EIP-7702 senders', () => {
  const auth = (address: Address) => ({
    address,
    chainId: '0x7a69',
    nonce: '0x0',
    r: `0x${'11'.repeat(32)}`,
    s: `0x${'22'.repeat(32)}`,
    yParity: '0x0',
  });
  const eoaOp = async (version: Version, delegate: Address) => {
    const { op } = await newAccountOp(version);
    const { factory: _f, factoryData: _d, ...rest } = op;
    return wire({ ...rest, factory: '0x7702', eip7702Auth: auth(delegate) });
  };

  test('a delegate the deployment does not allow is refused (-32030, naming the allowed ones), at the stub already', async () => {
    const stranger = '0x000000000000000000000000000000000000bEEF';
    for (const method of ['pm_getPaymasterStubData', 'pm_getPaymasterData'] as const) {
      const r = await rpcV2(method, [
        await eoaOp('0.8', stranger),
        app.fx.entryPoints['0.8'],
        hex(BigInt(app.fx.chain.chainId)),
        {},
      ]);
      assert.equal(r.body.error?.code, -32030, JSON.stringify(r.body));
      assert.match(
        r.body.error?.message ?? '',
        /EIP-7702 delegate 0x000000000000000000000000000000000000bEEF is not sponsored by this Patron; it sponsors accounts delegated to 0xe6cae83bde06e4c305530e199d7217f42808555b/,
      );
    }
  });

  test('an allowed delegate gets a stub; EIP-7702 on EntryPoint v0.7 is invalid params', async () => {
    const allowed = app.fx.simple7702Accounts['0.8'];
    const ok = await rpcV2('pm_getPaymasterStubData', [
      await eoaOp('0.8', allowed),
      app.fx.entryPoints['0.8'],
      hex(BigInt(app.fx.chain.chainId)),
      {},
    ]);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const v07 = await rpcV2('pm_getPaymasterStubData', [
      await eoaOp('0.7', allowed),
      app.fx.entryPoints['0.7'],
      hex(BigInt(app.fx.chain.chainId)),
      {},
    ]);
    assert.equal(v07.body.error?.code, -32602);
    assert.match(v07.body.error?.message ?? '', /needs EntryPoint v0\.8 or later, not v0\.7/);
  });

  test('a malformed authorization (high s, bad yParity, r of 0, another chain) is refused, naming the field, before anything is reserved or signed', async () => {
    const allowed = app.fx.simple7702Accounts['0.8'];
    const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const liabilities = async () =>
      (await app.ctx.deps.solvency.checkNow()).find((x) => x.paymaster === app.fx.paymasters['0.8'])?.liabilitiesWei;
    const before = await liabilities();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ s: hex(N - 1n) }, 'params[0].eip7702Auth.s: must be from 1 to n / 2'],
      [{ yParity: '0x1b' }, 'params[0].eip7702Auth.yParity: must be 0 or 1'],
      [{ r: '0x0' }, 'params[0].eip7702Auth.r: must be a secp256k1 signature value'],
      [{ chainId: '0x5' }, `params[0].eip7702Auth.chainId: must be 0 or this chain's id, ${app.fx.chain.chainId}`],
    ];
    for (const [change, message] of cases) {
      const op = await eoaOp('0.8', allowed);
      const bad = { ...op, eip7702Auth: { ...(op.eip7702Auth as object), ...change } };
      for (const method of ['pm_getPaymasterStubData', 'pm_getPaymasterData'] as const) {
        const gas = {
          callGasLimit: hex(50_000n),
          verificationGasLimit: hex(100_000n),
          preVerificationGas: hex(78_000n),
        };
        const r = await rpcV2(method, [
          { ...bad, ...gas },
          app.fx.entryPoints['0.8'],
          hex(BigInt(app.fx.chain.chainId)),
          {},
        ]);
        assert.equal(r.body.error?.code, -32602, `${method} ${JSON.stringify(change)}: ${JSON.stringify(r.body)}`);
        assert.ok(r.body.error?.message.startsWith(`Invalid params: ${message}`), r.body.error?.message);
      }
    }
    assert.equal(await liabilities(), before, 'nothing reserved');
    // The same op with a well-formed authorization for any chain (0) is signed.
    const op = await eoaOp('0.8', allowed);
    const gas = { callGasLimit: hex(50_000n), verificationGasLimit: hex(100_000n), preVerificationGas: hex(78_000n) };
    const any = { ...op, ...gas, eip7702Auth: { ...(op.eip7702Auth as object), chainId: '0x0' } };
    const ok = await rpcV2('pm_getPaymasterData', [
      any,
      app.fx.entryPoints['0.8'],
      hex(BigInt(app.fx.chain.chainId)),
      {},
    ]);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });
});

describe('Biconomy dialect on /api/v2 (EntryPoint v0.7, named by the URL)', () => {
  test('pm_sponsorUserOperation with the op as abstractjs sends it (decimal strings, paymaster gas "0"): executes', async () => {
    const { account, op } = await newAccountOp('0.7');
    const decimal = Object.fromEntries(
      Object.entries({
        ...op,
        paymasterVerificationGasLimit: 0n,
        paymasterPostOpGasLimit: 0n,
        callGasLimit: 0n,
        verificationGasLimit: 0n,
        preVerificationGas: 0n,
      }).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString(10) : v]),
    );
    const r = await rpcV2('pm_sponsorUserOperation', [decimal, { mode: 'SPONSORED', calculateGasLimits: true }]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const p = r.body.result ?? {};
    assert.equal(p.mode, 'SPONSORED');
    assert.equal(p.paymaster, app.fx.paymasters['0.7']);
    await execute('0.7', account, {
      ...op,
      callGasLimit: quantity(p.callGasLimit),
      verificationGasLimit: quantity(p.verificationGasLimit),
      preVerificationGas: quantity(p.preVerificationGas),
      paymaster: p.paymaster as Address,
      paymasterVerificationGasLimit: quantity(p.paymasterVerificationGasLimit),
      paymasterPostOpGasLimit: quantity(p.paymasterPostOpGasLimit),
      paymasterData: p.paymasterData as Hex,
    } as UserOperation<'0.7'>);
  });

  test('pm_supportedEntryPoints lists the four; an EntryPoint the chain lacks is refused naming what it has', async () => {
    const r = await rpcV2('pm_supportedEntryPoints', []);
    assert.deepEqual(r.body.result, [
      app.fx.entryPoints['0.6'],
      app.fx.entryPoints['0.7'],
      app.fx.entryPoints['0.8'],
      app.fx.entryPoints['0.9'],
    ]);
    const { op } = await newAccountOp('0.7');
    const bad = await rpcV2('pm_getPaymasterStubData', [
      wire(op),
      '0x000000000000000000000000000000000000dEaD',
      hex(BigInt(app.fx.chain.chainId)),
      {},
    ]);
    assert.equal(bad.body.error?.code, -32602);
    assert.match(bad.body.error?.message ?? '', /is not served here; chain \d+ is served for v0\.6 at 0x/);
  });
});
