import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type Address, decodeFunctionData, encodeFunctionData, type Hex, parseAbi } from 'viem';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { decodeAccountCalls } from '../src/policies/accountCalls.js';
import {
  buildDeployingOp,
  COUNTER_ADDRESS,
  executeCallData,
  type PatronFixture,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { createTenant, type Tenant, type TestContext, withoutHoldShares } from './helpers/testContext.js';

/** Rows reserved without an op key (as before migration 0022) are found by their userOpHash. */
const NO_OP_KEY = `0x${'00'.repeat(32)}`;

/**
 * Security review of the sponsorship policies, as attacks by whoever holds a dApp's public API key. Tests that
 * pass document a defence; see the review report for the ones that fail (kept in other files, uncommitted).
 */
let app: RpcFixture;
let fx: PatronFixture;
let ctx: TestContext;
let tenant: Tenant;

before(async () => {
  app = await startRpcFixture();
  ({ fx, ctx } = app);
});
after(() => app.close());
beforeEach(async () => {
  tenant = await createTenant(ctx.deps);
});

const rpc = (method: string, params: unknown[]) => app.rpc(method, params, { apiKey: tenant.apiKey });
const sponsor = (op: UserOperationV06, mode: Record<string, unknown> = {}) =>
  rpc('pm_sponsorUserOperation', [biconomyWireOp(op), { mode: 'SPONSORED', calculateGasLimits: false, ...mode }]);
const addPolicy = (rules: unknown, name = 'p') => ctx.deps.policies.create({ dappId: tenant.dappId, name, rules });
const dataOf = (b: { error?: { data?: unknown } }) => (b.error?.data ?? {}) as Record<string, unknown>;

const simpleAccount = parseAbi(['function execute(address dest, uint256 value, bytes func)']);

describe('a named sponsorshipPolicyId chooses, never skips', () => {
  test('naming the loose policy still applies the strict one (rules and caps)', async () => {
    const loose = await addPolicy({}, 'loose');
    await addPolicy({ contracts: [{ address: fx.entryPoint }] }, 'strict');
    const op = await buildDeployingOp(fx, 101n);
    const named = await sponsor(op, { sponsorshipPolicyId: loose.id });
    assert.equal(named.body.error?.code, -32012);
    assert.equal(dataOf(named.body).rule, 'contractNotAllowed');
  });

  test('a per-dApp ops cap is one counter whichever policy the request names', async () => {
    const a = await addPolicy({ caps: [{ scope: 'dapp', unit: 'ops', limit: '1' }] }, 'a');
    const b = await addPolicy({}, 'b');
    assert.equal((await sponsor(await buildDeployingOp(fx, 102n), { sponsorshipPolicyId: a.id })).status, 200);
    const second = await sponsor(await buildDeployingOp(fx, 103n), { sponsorshipPolicyId: b.id });
    assert.equal(dataOf(second.body).rule, 'cap');
    assert.equal(dataOf(second.body).policyId, a.id);
  });

  test('malformed ids are a -32602 or a policyNotFound denial, never a 500', async () => {
    await addPolicy({}, 'only');
    const op = await buildDeployingOp(fx, 104n);
    const cases: unknown[] = [
      'x'.repeat(101),
      '',
      12,
      null,
      { $ne: 1 },
      ['a'],
      "' OR 1=1 --",
      '\u0000\u202e../../',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ];
    for (const id of cases) {
      const r = await sponsor(op, { sponsorshipPolicyId: id });
      assert.ok(r.status === 400, `${JSON.stringify(id)}: ${r.status} ${JSON.stringify(r.body)}`);
      assert.ok([-32602, -32012].includes(r.body.error?.code ?? 0), JSON.stringify(r.body));
    }
    // Another dApp's policy id is "not found" here.
    const other = await createTenant(ctx.deps);
    const foreign = await ctx.deps.policies.create({ dappId: other.dappId, name: 'theirs', rules: {} });
    const r = await sponsor(op, { sponsorshipPolicyId: foreign.id });
    assert.equal(dataOf(r.body).rule, 'policyNotFound');
  });
});

describe('cap exhaustion with unsubmitted signatures (the documented trade-off, quantified)', () => {
  test('the caller picks the hold: expiryDuration up to PATRON_EXPIRY_MAX_SECONDS, not the default', async () => {
    const policy = await addPolicy({ caps: [{ scope: 'dapp', unit: 'ops', limit: '1000' }] });
    const op = await buildDeployingOp(fx, 110n);
    const t0 = Math.floor(Date.now() / 1000);
    const r = await sponsor(op, { expiryDuration: 10 * 86_400 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const validUntil = Number(BigInt(`0x${String(r.body.result?.paymasterAndData).slice(44, 56)}`));
    const max = ctx.deps.config.paymaster.sponsorship.maxExpirySeconds;
    // Clamped to the maximum (600 s by default: what a person signing needs, bench/README.md), and the reservation
    // is kept until the chain passes validUntil: one unsubmitted signature holds its share of a cap for 10 minutes.
    assert.ok(validUntil >= t0 + max - 2 && validUntil <= t0 + max + 2, `${validUntil - t0}`);
    const [usage] = await ctx.deps.policies.usage({ dappId: tenant.dappId, policyId: policy.id });
    assert.equal(usage?.reserved, '1');
  });

  test('the same op key signed again (another window, other callData) holds one reservation, not two', async () => {
    await withoutHoldShares(ctx.deps, tenant.dappId);
    await addPolicy({ caps: [{ scope: 'dapp', unit: 'ops', limit: '2' }] });
    const op = await buildDeployingOp(fx, 111n);
    assert.equal((await sponsor(op)).status, 200);
    // Another window and other callData: other signatures of the same (sender, nonce), of which the EntryPoint
    // includes one at most. Before issue 31 each held its own reservation, and two filled this cap.
    assert.equal((await sponsor(op, { expiryDuration: 200 })).status, 200);
    assert.equal((await sponsor({ ...op, callData: executeCallData('0x02') })).status, 200);
    assert.equal((await sponsor(await buildDeployingOp(fx, 112n))).status, 200, 'the cap has room for another op');
    const third = await sponsor(await buildDeployingOp(fx, 113n));
    assert.equal(dataOf(third.body).rule, 'cap');
  });
});

describe('the execute(address,uint256,bytes) decoders vs what Solidity executes', () => {
  /** Solidity 0.8 (ABI coder v2) decoding of execute(address,uint256,bytes): the call made, or undefined (revert). */
  function solidity(callData: Hex): { to: string; value: bigint; data: string } | undefined {
    const body = callData.slice(10);
    const word = (at: number) => (at * 2 + 64 <= body.length ? body.slice(at * 2, at * 2 + 64) : undefined);
    const w0 = word(0);
    const w1 = word(32);
    const w2 = word(64);
    if (w0 === undefined || w1 === undefined || w2 === undefined) return undefined;
    if (!/^0{24}/.test(w0)) return undefined; // dirty address bits revert
    const offset = BigInt(`0x${w2}`);
    if (offset > 0xffffffffffffffffn) return undefined;
    const o = Number(offset);
    const lw = word(o);
    if (lw === undefined) return undefined;
    const length = BigInt(`0x${lw}`);
    if (length > 0xffffffffffffffffn) return undefined;
    const end = o + 32 + Number(length);
    if (end * 2 > body.length) return undefined;
    return { to: `0x${w0.slice(24)}`, value: BigInt(`0x${w1}`), data: `0x${body.slice((o + 32) * 2, end * 2)}` };
  }

  let seed = 0x12345678;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const hexBytes = (n: number) => Array.from({ length: n }, () => rand(256).toString(16).padStart(2, '0')).join('');
  const w = (v: bigint) => v.toString(16).padStart(64, '0');

  /** A random, often non-canonical, encoding of execute(to, value, data) plus junk. */
  function mutant(): Hex {
    const to = rand(4) === 0 ? `${hexBytes(12)}${hexBytes(20)}` : `${'0'.repeat(24)}${hexBytes(20)}`;
    const value = BigInt(rand(3));
    const data = hexBytes(rand(70));
    const gap = rand(3) === 0 ? hexBytes(32 * rand(3)) : '';
    const pick = rand(8);
    const offset =
      pick === 0
        ? BigInt(96 + rand(64))
        : pick === 1
          ? 2n ** 255n
          : pick === 2
            ? BigInt(rand(200))
            : BigInt(96 + gap.length / 2);
    const realLen = data.length / 2;
    const lenPick = rand(6);
    const length =
      lenPick === 0
        ? BigInt(realLen + rand(40))
        : lenPick === 1
          ? BigInt(Math.max(0, realLen - rand(5)))
          : lenPick === 2
            ? 2n ** 64n + BigInt(realLen)
            : BigInt(realLen);
    const padded = data.padEnd(Math.ceil(data.length / 64) * 64, rand(4) === 0 ? 'f' : '0');
    const trailing = rand(4) === 0 ? hexBytes(rand(40)) : '';
    return `0xb61d27f6${to}${w(value)}${w(offset)}${gap}${w(length)}${padded}${trailing}` as Hex;
  }

  test('over 6,000 mutated encodings Patron decodes exactly the call Solidity makes, or refuses', () => {
    let agreed = 0;
    let refused = 0;
    for (let i = 0; i < 6000; i++) {
      const cd = mutant();
      const sol = solidity(cd);
      const patron = decodeAccountCalls(cd);
      if (!patron.ok) {
        refused++;
        continue;
      }
      if (sol === undefined) continue; // the account reverts: no call is made whatever Patron read
      assert.equal(patron.calls.length, 1, cd);
      const [c] = patron.calls;
      assert.equal(c?.to.toLowerCase(), sol.to, cd);
      assert.equal(c?.value, sol.value, cd);
      assert.equal(c?.data.toLowerCase(), sol.data, cd);
      agreed++;
    }
    assert.ok(agreed > 50 && refused > 1000, `${agreed} agreed, ${refused} refused`);
  });

  test('the fast path and viem agree on every canonical encoding (also against viem for non-canonical ones)', () => {
    for (let i = 0; i < 5000; i++) {
      const cd =
        i % 2 === 0
          ? encodeFunctionData({
              abi: simpleAccount,
              functionName: 'execute',
              args: [`0x${hexBytes(20)}` as Address, BigInt(rand(1000)), `0x${hexBytes(rand(100))}`],
            })
          : mutant();
      const patron = decodeAccountCalls(cd);
      let viem: readonly [Address, bigint, Hex] | undefined;
      try {
        viem = decodeFunctionData({ abi: simpleAccount, data: cd }).args as readonly [Address, bigint, Hex];
      } catch {
        viem = undefined;
      }
      if (viem === undefined) {
        assert.equal(patron.ok, false, cd);
        continue;
      }
      assert.ok(patron.ok, cd);
      assert.equal(patron.calls[0]?.to.toLowerCase(), viem[0].toLowerCase());
      assert.equal(patron.calls[0]?.value, viem[1]);
      assert.equal(patron.calls[0]?.data.toLowerCase(), viem[2].toLowerCase());
    }
  });

  test('a collision-free table: Kernel v2 execute(address,uint256,bytes,uint8) is not read as the 3-argument one', () => {
    const kernel = encodeFunctionData({
      abi: parseAbi(['function execute(address to, uint256 value, bytes data, uint8 operation)']),
      functionName: 'execute',
      args: [COUNTER_ADDRESS, 0n, '0x', 1],
    });
    const r = decodeAccountCalls(kernel);
    assert.equal(r.ok, false, 'a Kernel delegatecall fails closed');
  });
});

describe('settlement counts each op once, for this paymaster and chain', () => {
  const charge = (key: string, amount: bigint) => ({
    key,
    unit: 'wei' as const,
    amount,
    limit: 10n ** 30n,
    windowEnd: undefined,
  });

  test('an event for the same userOpHash on another chain settles nothing; a replayed event counts once', async () => {
    const ledger = ctx.deps.store.spendLedger;
    const key = `attack|${tenant.dappId}|dapp`;
    const hash = `0x${'ab'.repeat(32)}`;
    assert.deepEqual(
      await ledger.reserve({
        id: `31337:${hash}`,
        dappId: tenant.dappId,
        chainId: 31337,
        userOpHash: hash,
        charges: [charge(key, 1000n)],
        expiresAt: Date.now() + 60_000,
        now: Date.now(),
      }),
      { ok: true },
    );
    assert.equal(
      (
        await ledger.settleUserOp({
          chainId: 1,
          userOpHash: hash,
          opKey: NO_OP_KEY,
          actualWei: 5n,
          actualUsdMicros: undefined,
          now: Date.now(),
        })
      ).settled,
      false,
    );
    assert.equal(
      (
        await ledger.settleUserOp({
          chainId: 31337,
          userOpHash: hash.toUpperCase().replace('0X', '0x'),
          opKey: NO_OP_KEY,
          actualWei: 400n,
          actualUsdMicros: undefined,
          now: Date.now(),
        })
      ).settled,
      true,
    );
    assert.equal(
      (
        await ledger.settleUserOp({
          chainId: 31337,
          userOpHash: hash,
          opKey: NO_OP_KEY,
          actualWei: 400n,
          actualUsdMicros: undefined,
          now: Date.now(),
        })
      ).settled,
      false,
    );
    // The chain passing its window afterwards releases nothing more.
    const past = { chainId: 31337, paymaster: fx.paymaster, cursorBlock: 10n ** 9n, now: Date.now() };
    await ledger.releaseClosed({ ...past, cursorTimestamp: BigInt(Date.now()) });
    const c = (await ledger.counters([key])).get(key);
    assert.deepEqual(c, { used: 400n, reserved: 0n });
  });

  test('reserve, settle and release racing on one counter leave it exact', async () => {
    const ledger = ctx.deps.store.spendLedger;
    const key = `race|${tenant.dappId}`;
    const now = Date.now();
    const n = 300;
    const ids = Array.from(
      { length: n },
      (_, i) => `31337:0x${i.toString(16).padStart(64, '0')}${tenant.dappId.slice(0, 4)}`,
    );
    // Half reserved first; then settle those, release those whose window the chain passed, and reserve the other
    // half, all at once.
    await Promise.all(
      ids.slice(0, n / 2).map((id, i) =>
        ledger.reserve({
          id,
          dappId: tenant.dappId,
          chainId: 31337,
          userOpHash: id.slice(6),
          charges: [charge(key, 10n)],
          expiresAt: i % 3 === 0 ? now - 10_000 : now + 600_000,
          now,
        }),
      ),
    );
    const work: Promise<unknown>[] = [];
    // The settlement cursor at a block whose timestamp is past the expired ones' validUntil only.
    const passed = {
      chainId: 31337,
      paymaster: fx.paymaster,
      cursorBlock: 10n ** 9n,
      cursorTimestamp: BigInt(Math.floor(now / 1000)),
      now,
    };
    ids.forEach((id, i) => {
      if (i < n / 2) {
        if (i % 3 !== 0)
          work.push(
            ledger.settleUserOp({
              chainId: 31337,
              userOpHash: id.slice(6),
              opKey: NO_OP_KEY,
              actualWei: 7n,
              actualUsdMicros: undefined,
              now,
            }),
          );
      } else {
        work.push(
          ledger.reserve({
            id,
            dappId: tenant.dappId,
            chainId: 31337,
            userOpHash: id.slice(6),
            charges: [charge(key, 10n)],
            expiresAt: now + 600_000,
            now,
          }),
        );
      }
      if (i % 50 === 0) work.push(ledger.releaseClosed(passed));
    });
    await Promise.all(work);
    await ledger.releaseClosed(passed);
    const c = (await ledger.counters([key])).get(key);
    const settled = Array.from({ length: n / 2 }, (_, i) => i).filter((i) => i % 3 !== 0).length;
    assert.deepEqual(c, { used: BigInt(settled) * 7n, reserved: BigInt(n / 2) * 10n });
  });
});

describe('a denial is cheap', () => {
  test('an undecodable or disallowed call is refused before any simulation or webhook', async () => {
    await addPolicy({ contracts: [{ address: COUNTER_ADDRESS }] });
    const op = await buildDeployingOp(fx, 120n);
    const r = await rpc('pm_sponsorUserOperation', [
      biconomyWireOp({ ...op, callData: executeCallData('0x') }, false),
      { mode: 'SPONSORED' },
    ]);
    // the allowed call passes (simulated: no limits given)
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
});
